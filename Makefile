# Two commands for a fresh machine:
#   make run    install everything, then run the main job (QAOA Max-Cut on the embedded default)
#   make test   install what tests need, then run them (all but the `slow` ones: what CI runs)
#   make test-all   the same with the `slow` tests too (long notebooks, PennyLane's device suite, ...)
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The CPU wheel of torch; a plain `pip install qhybrid` elsewhere takes a normal torch.
# numba kernels compile on first use into ~/.cache/qhybrid (or NUMBA_CACHE_DIR): no warm-up step.
TORCH_SPEC ?= torch==2.13.0


.PHONY: run test test-all setup setup-test bench clean

# Each step says what it installs before pip runs quietly (its own output only on an error),
# in a line that fits 80 columns.
SAY = @printf 'make: %s\n'

$(BIN)/python:
	$(SAY) "creating the virtual environment $(VENV) and upgrading pip ..."
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(SAY) "installing $(TORCH_SPEC) (the largest download: minutes the first time)"
	@$(BIN)/pip install -q "$(TORCH_SPEC)"
	$(SAY) "installing qhybrid (editable) with PennyLane, Lightning, numba, Typer ..."
	@$(BIN)/pip install -q -e ".[lightning,plot]"
	@touch $@
	$(SAY) "installed into $(VENV)"

$(VENV)/.installed-test: $(VENV)/.installed
	$(SAY) "installing the test tools (pytest and the extra .[test]) ..."
	@$(BIN)/pip install -q -e ".[test]"
	@touch $@

setup: $(VENV)/.installed
setup-test: $(VENV)/.installed-test

run: setup
	$(SAY) "running the main job: qhybrid qaoa (QAOA Max-Cut, 18 qubits)"
	@$(BIN)/qhybrid qaoa

test: setup-test
	$(BIN)/python -m pytest -q -m "not slow"

test-all: setup-test
	$(BIN)/python -m pytest -q

bench: setup-test
	$(BIN)/python benchmarks/engine.py

clean:
	rm -rf $(VENV) build src/*.egg-info
