"""What a QAOA run found, in numbers and in words: the best of the most likely bitstrings, the
optimum, both approximation ratios and one sentence (``cut 21 of 24 edges — optimum 21 (found)``).

Graphs are :class:`qhybrid.qaoa.problem.Graph` (a networkx graph is converted by ``as_graph``).
"""
from __future__ import annotations

from qhybrid.qaoa.problem import as_graph


def energy_of(bits: str, graph, problem: str) -> float:
    """The energy (cost function value) of one bitstring (wire 0 first): -cut, or the Max-Clique cost."""
    g = as_graph(graph)
    z = [int(b) for b in bits]
    if problem == "maxcut":
        return -float(sum(w for (i, j), w in zip(g.edges, g.weights) if z[i] != z[j]))
    n, edges = len(z), set(g.edges)
    comp = [(i, j) for i in range(n) for j in range(i + 1, n) if (i, j) not in edges]
    return sum(3 * (-0.25 + z[i] * z[j]) for i, j in comp) + sum(1 - 2 * b for b in z)


def clique_size(bits: str, graph) -> int | None:
    """The size of the node set ``bits`` marks when it is a clique of ``graph``, else None."""
    edges = set(as_graph(graph).edges)
    nodes = [i for i, b in enumerate(bits) if b == "1"]
    ok = all((u, v) in edges for k, u in enumerate(nodes) for v in nodes[k + 1:])
    return len(nodes) if ok else None


def ratio(problem: str, energy: float, minimum: float, maximum: float) -> float:
    """Approximation ratio: Max-Cut ``E / C_min``; Max-Clique ``(C_max - E) / (C_max - C_min)``."""
    if problem == "maxcut":
        return energy / minimum if minimum else 1.0
    span = maximum - minimum
    return (maximum - energy) / span if span else 1.0


def _num(x: float) -> str:
    return f"{x:g}" if float(x).is_integer() else f"{x:.4g}"


def sentence(graph, problem: str, best_bits: str, optimal_bits: str, found: bool) -> str:
    """The answer in words, e.g. ``cut 21 of 24 edges — optimum 21 (found)``."""
    tail = "found" if found else "not found"
    graph = as_graph(graph)
    if problem == "maxcut":
        weighted = any(w != 1.0 for w in graph.weights)
        cut, best = -energy_of(best_bits, graph, problem), -energy_of(optimal_bits, graph, problem)
        if weighted:
            return f"cut weight {_num(cut)} of {_num(sum(graph.weights))} — optimum {_num(best)} ({tail})"
        return f"cut {_num(cut)} of {graph.n_edges} edges — optimum {_num(best)} ({tail})"
    size, best = clique_size(best_bits, graph), clique_size(optimal_bits, graph)
    what = f"clique of {size} nodes" if size is not None else "no clique (best bitstring is not one)"
    return f"{what} — optimum {best} nodes ({tail})"


def answer(graph, problem: str, diagonal, energy: float, top: list[tuple[str, float]]) -> dict:
    """The result's answer keys from the final energy and the ``top`` (bitstring, probability) pairs.

    ``best_bitstring`` is the lowest-energy bitstring among ``top`` (ties: the more likely).
    """
    graph = as_graph(graph)
    best_bits, best_p = min(top, key=lambda bp: (energy_of(bp[0], graph, problem), -bp[1]))
    best_value = energy_of(best_bits, graph, problem)
    optimum, optimal = diagonal.optimum(max_bitstrings=8)
    found = best_value <= optimum + 1e-9
    out = {
        "summary": sentence(graph, problem, best_bits, optimal[0], found),
        "energy": energy, "best_bitstring": best_bits, "best_probability": best_p, "best_value": best_value,
        "optimum": optimum, "optimal_bitstrings": optimal, "found": found,
        "approximation_ratio": ratio(problem, energy, diagonal.minimum, diagonal.maximum),
        "best_approximation_ratio": ratio(problem, best_value, diagonal.minimum, diagonal.maximum),
    }
    if problem == "maxcut":
        out["best_cut"], out["optimum_cut"] = -best_value, -optimum
    else:
        out["best_clique"] = clique_size(best_bits, graph)
    return out
