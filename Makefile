# Two commands on a fresh machine: `make demo` (install + run) and `make test` (install + all tests).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint install clean

$(STAMP): setup.cfg pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/rightsizer demo

lint: $(STAMP)
	$(BIN)/ruff check app tests migrations benchmarks wsgi.py
	$(BIN)/ruff format --check app tests migrations benchmarks wsgi.py
	$(BIN)/lint-imports
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest --cov --cov-report=term $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache .ruff_cache .mypy_cache .coverage rightsizer.db
