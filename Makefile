# Two commands on a fresh machine: `make demo` (install + run; PORT=N for another port than 8443,
# 0 for any free one) and `make test` (install + all tests).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Two installs into the one venv: the service with its simulated cluster (the `simulator` extra:
# what `make demo` needs), and the service with the test toolchain (pytest, playwright, mypy,
# schemathesis...: `make test`, `make check`).
SERVICE_STAMP := $(VENV)/.installed-service
STAMP := $(VENV)/.installed
PORT ?= 8443

.PHONY: demo test test-fast check lint install clean kube

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(SERVICE_STAMP): setup.cfg pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet -e '.[simulator]'
	touch $(SERVICE_STAMP)

$(STAMP): setup.cfg pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP) $(SERVICE_STAMP)

install: $(STAMP)

demo: $(SERVICE_STAMP)
	$(BIN)/rightsizer demo --port $(PORT)

# Lint, formatting, types (mypy over app/, tools/, tests/ and benchmarks/, as setup.cfg's [mypy]
# sections say) and the import contracts of setup.cfg.
check: $(STAMP)
	$(BIN)/ruff check app tests migrations benchmarks wsgi.py
	$(BIN)/ruff format --check app tests migrations benchmarks wsgi.py
	$(BIN)/lint-imports
	$(BIN)/mypy

lint: check

# The contributor's loop: unit and property tests only. No process, server, simulated or real
# cluster, or browser (tests/support/process_marker.py marks those `process`), nothing `slow`.
FAST_MARKS := not process and not slow and not e2e and not browser
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider -m "$(FAST_MARKS)" $(PYTEST_ARGS)

# The real control plane the tests under tests/realkube run (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kwok, metrics-server), built from Go modules into a
# cache outside the checkout: minutes the first time on 2 cores (CONTRIBUTING.md), nothing after
# (tools/build.py). Without Go
# it says so and those tests are skipped (CI requires them).
kube:
	@if command -v go >/dev/null 2>&1; then $(PYTHON) tools/build.py >/dev/null; \
	else echo "go is not on the PATH: the real-control-plane tests (tests/realkube) will be skipped" >&2; fi

test: check kube
	$(BIN)/python -m pytest --cov --cov-report=term $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache .ruff_cache .mypy_cache .coverage rightsizer.db
