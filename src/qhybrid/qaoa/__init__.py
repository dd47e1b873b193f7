"""Fast QAOA path: graph -> cost diagonal -> energy, adjoint gradient, probabilities, optimum.

Pure computation (no files, environment or logging). See ``ADJOINT.md`` for the method.

    >>> from qhybrid.qaoa import QAOA
    >>> q = QAOA([(0, 1), (1, 2), (2, 0)])             # or a networkx graph
    >>> energy, grad = q.energy_and_grad([[0.5], [0.5]])  # params = [gammas, betas]
"""
from __future__ import annotations

from qhybrid.qaoa.memory import available_bytes, required_bytes, state_bytes
from qhybrid.qaoa.problem import PROBLEMS, CostDiagonal, Graph, as_graph, bitstring, cost_diagonal
from qhybrid.qaoa.simulator import QAOA

__all__ = ["QAOA", "CostDiagonal", "Graph", "PROBLEMS", "as_graph", "bitstring", "cost_diagonal",
           "available_bytes", "required_bytes", "state_bytes"]
