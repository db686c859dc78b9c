# Two entry points: `make demo` (install planstate, run the bundled example) and
# `make test` (install the test tools, run pytest, ruff and mypy, and `planstate check` on this project's own
# .planning/ when there is one). Both use ./.venv.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test bench clean

$(BIN)/python:
	$(PYTHON) -c 'import sys; sys.exit("planstate needs Python 3.11 or newer") if sys.version_info < (3, 11) else None'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

demo: $(BIN)/python
	rm -f $(VENV)/.test-installed  # the install below replaces the editable one `make test` relies on
	$(BIN)/python -m pip install --quiet .
	$(BIN)/python examples/demo.py

# The test tools and planstate (editable: code changes need no reinstall), installed again when pyproject.toml changes.
$(VENV)/.test-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

test: $(VENV)/.test-installed
	$(BIN)/python -m pytest -q -n auto
	$(BIN)/python -m ruff check .
	$(BIN)/python -m ruff format --check .
	$(BIN)/python -m mypy
	if [ -d .planning ]; then $(BIN)/planstate check; fi

bench: $(VENV)/.test-installed
	$(BIN)/python benchmarks/cli_latency.py
	$(BIN)/python benchmarks/watch_latency.py
	$(BIN)/python benchmarks/mcp_latency.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
