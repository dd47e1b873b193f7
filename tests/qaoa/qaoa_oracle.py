"""The PennyLane oracle the fast path is checked against."""
from __future__ import annotations

import numpy as np



def pennylane_energy_and_grad(graph, params, problem="maxcut", weighted=False):
    """Energy and gradient of PennyLane's QAOA circuit on default.qubit (adjoint)."""
    import pennylane as qml
    from pennylane import numpy as pnp

    n = graph.number_of_nodes()
    if problem == "maxcut":
        cost_h, mixer_h = qml.qaoa.maxcut(graph)
        if weighted:  # qml.qaoa.maxcut ignores weights: the weighted Hamiltonian, written out
            coeffs, ops = [], []
            for i, j, d in graph.edges(data=True):
                coeffs += [0.5 * d["weight"], -0.5 * d["weight"]]
                ops += [qml.Z(i) @ qml.Z(j), qml.Identity(i)]
            cost_h = qml.Hamiltonian(coeffs, ops)
    else:
        cost_h, mixer_h = qml.qaoa.max_clique(graph, constrained=False)
    dev = qml.device("default.qubit", wires=n)

    @qml.qnode(dev, diff_method="adjoint")
    def circuit(x):
        for w in range(n):
            qml.Hadamard(wires=w)
        for layer in range(x.shape[1]):
            qml.qaoa.cost_layer(x[0, layer], cost_h)
            qml.qaoa.mixer_layer(x[1, layer], mixer_h)
        return qml.expval(cost_h)

    grad_fn = qml.grad(circuit)
    g = grad_fn(pnp.array(params, requires_grad=True))
    return float(grad_fn.forward), np.asarray(g)




def random_graph(n, m, seed, weighted=False):
    import networkx as nx

    g = nx.gnm_random_graph(n, m, seed=seed)
    if weighted:
        rng = np.random.default_rng(seed)
        for e in g.edges:
            g.edges[e]["weight"] = float(rng.uniform(0.2, 2.0))
    return g
