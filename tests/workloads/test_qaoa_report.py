"""The QAOA answer: best of the likely bitstrings, ratios, the sentence."""
from __future__ import annotations

import networkx as nx
import pytest

from qhybrid.qaoa.problem import cost_diagonal
from qhybrid.workloads import qaoa_report as report


def test_best_of_the_likely_bitstrings_not_the_most_likely():
    g = nx.path_graph(4)  # optimum: alternate, cut 3
    diag = cost_diagonal(g, "maxcut")
    top = [("0000", 0.5), ("0011", 0.3), ("0101", 0.1)]
    out = report.answer(g, "maxcut", diag, -2.0, top)
    assert out["best_bitstring"] == "0101" and out["best_cut"] == 3 and out["found"]
    assert out["summary"] == "cut 3 of 3 edges — optimum 3 (found)"
    assert out["approximation_ratio"] == pytest.approx(2 / 3) and out["best_approximation_ratio"] == 1.0
    out = report.answer(g, "maxcut", diag, -1.0, top[:2])
    assert out["summary"] == "cut 1 of 3 edges — optimum 3 (not found)" and not out["found"]


def test_max_clique_sentence():
    g = nx.complete_graph(3)
    g.add_edge(2, 3)
    diag = cost_diagonal(g, "maxclique")
    out = report.answer(g, "maxclique", diag, diag.minimum, [("1110", 0.9)])
    assert out["best_clique"] == 3 and out["summary"] == "clique of 3 nodes — optimum 3 nodes (found)"
    assert report.clique_size("1001", g) is None
