# Two commands on a fresh Debian machine with Python 3.11: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: install system-deps demo test unit lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[spark,dev]'
	touch $(STAMP)

system-deps:
	bash scripts/system-deps.sh

install: $(STAMP) system-deps

demo: install
	bash scripts/demo.sh

lint: $(STAMP)
	$(BIN)/ruff check compiler runtime tests bench
	$(BIN)/mypy

# Fast tests only: the compiler, no JVM.
unit: $(STAMP)
	$(BIN)/pytest -q -m "not spark"

test: install lint
	$(BIN)/pytest -q

bench: install
	$(BIN)/python bench/validate.py

clean:
	rm -rf $(VENV) .lake .pytest_cache .mypy_cache .ruff_cache
