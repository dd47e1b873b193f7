"""Cost diagonals against PennyLane's Hamiltonians and brute force."""
from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pennylane as qml
import pytest

from qhybrid.errors import OperationError, WireError
from qhybrid.qaoa import as_graph, cost_diagonal

from qaoa_oracle import random_graph


def _pl_diag(h, n):
    return np.real(np.diag(qml.matrix(h, wire_order=range(n))))


@pytest.mark.parametrize("n,m,seed", [(3, 2, 0), (5, 7, 1), (7, 12, 2)])
def test_maxcut_matches_pennylane(n, m, seed):
    g = random_graph(n, m, seed)
    cost_h, _ = qml.qaoa.maxcut(g)
    d = cost_diagonal(g, "maxcut")
    assert d.index is not None and d.index.dtype == np.uint8
    np.testing.assert_allclose(d.dense(), _pl_diag(cost_h, n), atol=1e-12)


@pytest.mark.parametrize("n,m,seed", [(4, 2, 0), (6, 9, 3)])
def test_maxclique_matches_pennylane(n, m, seed):
    g = random_graph(n, m, seed)
    cost_h, mixer_h = qml.qaoa.max_clique(g, constrained=False)
    assert all(op.name == "PauliX" for op in mixer_h.ops)  # unconstrained: the X mixer
    d = cost_diagonal(g, "maxclique")
    np.testing.assert_allclose(d.dense(), _pl_diag(cost_h, n), atol=1e-12)


def test_weighted_maxcut_and_ignoring_weights():
    g = random_graph(6, 9, 4, weighted=True)
    d = cost_diagonal(g, "maxcut")
    assert d.values is not None  # non-integer weights: dense values, no lookup
    brute = [-sum(w for i, j, w in g.edges(data="weight") if ((z >> (5 - i)) & 1) != ((z >> (5 - j)) & 1))
             for z in range(64)]
    np.testing.assert_allclose(d.values, brute, atol=1e-12)
    unweighted = cost_diagonal(g, "maxcut", weight=None)
    np.testing.assert_allclose(unweighted.dense(), _pl_diag(qml.qaoa.maxcut(g)[0], 6), atol=1e-12)


def test_integer_weights_use_lookup():
    d = cost_diagonal([(0, 1, 3), (1, 2, 2)], "maxcut")
    assert d.index is not None
    assert d.optimum() == (-5.0, ["010", "101"])


@pytest.mark.parametrize("problem", ["maxcut", "maxclique"])
def test_optimum_is_brute_force(problem):
    g = random_graph(8, 13, 5)
    d = cost_diagonal(g, problem)
    vals = d.dense()
    best, bits = d.optimum()
    assert best == pytest.approx(vals.min())
    assert sorted(bits) == sorted(format(int(z), "08b") for z in np.flatnonzero(vals <= vals.min() + 1e-9))


def test_edge_list_input_matches_networkx():
    g = random_graph(7, 10, 6)
    a = cost_diagonal(list(g.edges), "maxcut", n_nodes=7).dense()
    b = cost_diagonal(g, "maxcut").dense()
    assert np.array_equal(a, b)
    assert as_graph([(0, 3)]).n_nodes == 4


def test_bad_graphs_are_refused():
    with pytest.raises(WireError, match="0..1"):
        as_graph(nx.relabel_nodes(nx.path_graph(2), {0: "a", 1: "b"}))
    with pytest.raises(WireError, match="self-loop"):
        as_graph([(1, 1)])
    with pytest.raises(WireError, match="twice"):
        as_graph([(0, 1), (1, 0)])
    with pytest.raises(WireError, match="outside"):
        as_graph([(0, 5)], n_nodes=3)
    with pytest.raises(OperationError, match="maxcut, maxclique"):
        cost_diagonal([(0, 1)], "maxcat")


def test_bit_order_wire0_most_significant():
    d = cost_diagonal([(0, 1)], "maxcut", n_nodes=3)  # wire 2 idle
    vals = d.dense().tolist()
    for z, (b0, b1, _b2) in enumerate(itertools.product((0, 1), repeat=3)):
        assert vals[z] == (-1.0 if b0 != b1 else 0.0)


@pytest.mark.parametrize("n", [0, 1, 2, 5, 10, 18])
def test_random_graph_is_networkx_gnm_edge_for_edge(n):
    """The fast path draws gnm graphs itself (no networkx import in the job): the same graph, the
    same edge order, for sparse, empty, complete and over-full edge counts and several seeds."""
    from qhybrid.qaoa.problem import random_graph

    pairs = n * (n - 1) // 2
    for m in sorted({0, 1, pairs // 3, pairs // 2, pairs - 1, pairs, pairs + 2} - {-1}):
        for seed in (0, 1, 7, 1967, 2**32 - 1):
            assert random_graph(n, m, seed=seed) == as_graph(nx.gnm_random_graph(n, m, seed=seed)), (n, m, seed)
