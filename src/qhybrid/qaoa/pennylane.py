"""The PennyLane formulation of the same QAOA the fast path computes.

Used where the algorithm runs on a PennyLane device (the QAOA job's
``local:pennylane/<name>`` path, the benchmarks). The tests keep their own
independent copy as an oracle. PennyLane is imported here only, on call.
"""
from __future__ import annotations


def hamiltonians(graph, problem: str = "maxcut"):
    """``(cost_h, mixer_h)`` as ``qml.qaoa`` builds them; Max-Cut honours non-unit ``weight``s.

    ``qml.qaoa.maxcut`` ignores edge weights, so a weighted graph's cost is written out as
    ``sum_ij w_ij 0.5 (Z_i Z_j - 1)``; unweighted graphs get PennyLane's own Hamiltonian.
    """
    import pennylane as qml

    if problem == "maxclique":
        return qml.qaoa.max_clique(graph, constrained=False)
    cost_h, mixer_h = qml.qaoa.maxcut(graph)
    weights = [d.get("weight", 1.0) for _, _, d in graph.edges(data=True)]
    if any(w != 1 for w in weights):
        coeffs, ops = [], []
        for (i, j), w in zip(graph.edges, weights):
            coeffs += [0.5 * w, -0.5 * w]
            ops += [qml.Z(i) @ qml.Z(j), qml.Identity(i)]
        cost_h = qml.Hamiltonian(coeffs, ops)
    return cost_h, mixer_h


def ansatz(params, cost_h, mixer_h, n_wires: int) -> None:
    """Queue the QAOA circuit: Hadamards, then p x (cost layer, mixer layer); ``params`` is (2, p)."""
    import pennylane as qml

    for w in range(n_wires):
        qml.Hadamard(wires=w)
    for layer in range(params.shape[1]):
        qml.qaoa.cost_layer(params[0, layer], cost_h)
        qml.qaoa.mixer_layer(params[1, layer], mixer_h)
