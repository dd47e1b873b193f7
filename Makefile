# Two commands for a fresh machine:
#   make run    install everything, then run the main job (QAOA Max-Cut on the embedded default)
#   make test   install what tests need, then run them
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The CPU wheel of torch; a plain `pip install qhybrid` elsewhere takes a normal torch.
TORCH_SPEC ?= torch==2.13.0

# What a QAOA job computes, once at 20 qubits, compiles every numba kernel of the fast path
# into numba's on-disk cache, so that jobs are not billed for compilation.
define WARM_UP
import torch, networkx as nx
from qhybrid.qaoa import QAOA
q = QAOA(nx.gnm_random_graph(20, 30, seed=1))
x = torch.full((2, 2), 0.3, dtype=torch.float64)
q.energy_and_grad(x); q.energy(x); q.most_likely(x, k=32); q.diagonal.optimum(max_bitstrings=8)
endef
export WARM_UP

.PHONY: run test setup setup-test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/pip install -q "$(TORCH_SPEC)"
	$(BIN)/pip install -q -e ".[lightning,plot,fast]"
	@echo "compiling the QAOA CPU kernels once (numba caches them; a minute or two)"
	$(BIN)/python -c "$$WARM_UP"
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(BIN)/pip install -q -e ".[test]"
	touch $@

setup: $(VENV)/.installed
setup-test: $(VENV)/.installed-test

run: setup
	$(BIN)/qhybrid qaoa

test: setup-test
	$(BIN)/python -m pytest -q

bench: setup-test
	$(BIN)/python benchmarks/engine.py

clean:
	rm -rf $(VENV) build src/*.egg-info
