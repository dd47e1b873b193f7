"""Fast QAOA path: graph -> cost diagonal -> energy, adjoint gradient, probabilities, optimum.

Pure computation (no files, environment or logging). See ``ADJOINT.md`` for the method.

    >>> from qhybrid.qaoa import QAOA
    >>> q = QAOA([(0, 1), (1, 2), (2, 0)])             # or a networkx graph
    >>> energy, grad = q.energy_and_grad([[0.5], [0.5]])  # params = [gammas, betas]
"""
from __future__ import annotations

import importlib

# loaded on first use, so that ``qhybrid.qaoa.memory`` (the CLI's pre-flight arithmetic) costs no numpy
_LAZY = {
    "QAOA": "simulator", "CostDiagonal": "problem", "Graph": "problem", "PROBLEMS": "problem",
    "as_graph": "problem", "bitstring": "problem", "cost_diagonal": "problem",
    "available_bytes": "memory", "required_bytes": "memory", "state_bytes": "memory",
}

__all__ = ["QAOA", "CostDiagonal", "Graph", "PROBLEMS", "as_graph", "bitstring", "cost_diagonal",
           "available_bytes", "required_bytes", "state_bytes"]


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(f"qhybrid.qaoa.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'qhybrid.qaoa' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
