"""QAOA problems as cost diagonals, built directly on the target torch device.

A problem is a graph on nodes ``0..n-1`` (node i is wire i; wire 0 is the most
significant bit of a basis-state index, PennyLane's order) and a diagonal cost
Hamiltonian ``C`` given by its ``2**n`` values. No Pauli terms are built.

- ``maxcut``: PennyLane's ``qml.qaoa.maxcut`` cost ``sum_(i,j) w_ij 0.5 (Z_i Z_j - 1)``,
  i.e. ``C(z) = -cut(z)``: energies are negative, the optimum is ``-maxcut``.
  PennyLane ignores edge weights (every edge counts 1); we honour the ``weight``
  attribute (default 1). Pass ``weight=None`` to ignore weights like PennyLane.
- ``maxclique``: ``qml.qaoa.max_clique(g, constrained=False)``:
  ``3 * sum_{(i,j) not in E} (Z_i Z_j - Z_i - Z_j)/4 + sum_i Z_i``, with the X mixer.

Integer-valued costs (unweighted or integer weights, Max-Clique in units of 1/4)
are stored as a small-int ``index`` into ``levels`` so a cost layer is one table
lookup per amplitude; other costs keep the float ``values``.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from qhybrid.errors import OperationError, WireError

PROBLEMS = ("maxcut", "maxclique")


@dataclass(frozen=True)
class Graph:
    """An undirected graph on nodes ``0..n_nodes-1``: edges ``(i, j)`` with ``i < j`` and weights."""

    n_nodes: int
    edges: tuple
    weights: tuple

    @property
    def n_edges(self) -> int:
        return len(self.edges)


def as_graph(graph, *, n_nodes: int | None = None, weight: str | None = "weight") -> Graph:
    """Normalise a networkx graph or an edge list to a :class:`Graph`.

    Args:
        graph: a networkx graph with integer nodes ``0..n-1``, a :class:`Graph`, or a
            sequence of ``(i, j)`` / ``(i, j, w)`` edges (no networkx needed).
        n_nodes: number of nodes for an edge list (default: largest node + 1).
        weight: edge attribute holding the weight (default 1 when absent); ``None`` ignores weights.

    Raises:
        WireError: node labels that are not the integers ``0..n-1``, self-loops, repeated edges.
    """
    if isinstance(graph, Graph):
        return graph
    if hasattr(graph, "nodes") and hasattr(graph, "edges"):
        nodes = list(graph.nodes)
        if any(not isinstance(v, int) or isinstance(v, bool) for v in nodes) or sorted(nodes) != list(range(len(nodes))):
            raise WireError(
                f"graph nodes must be the integers 0..{len(nodes) - 1} (node i is wire i); got {nodes[:8]}"
                " — relabel with networkx.convert_node_labels_to_integers(graph)"
            )
        n = len(nodes)
        raw = [(u, v, (d.get(weight, 1) if weight else 1)) for u, v, d in graph.edges(data=True)]
    else:
        raw = []
        for e in graph:
            e = tuple(e)
            if len(e) not in (2, 3):
                raise WireError(f"an edge must be (i, j) or (i, j, weight); got {e!r}")
            raw.append((e[0], e[1], (e[2] if (len(e) == 3 and weight) else 1)))
        n = n_nodes if n_nodes is not None else 1 + max((max(u, v) for u, v, _ in raw), default=-1)
    edges, weights, seen = [], [], set()
    for u, v, w in raw:
        if not (isinstance(u, int) and isinstance(v, int) and 0 <= u < n and 0 <= v < n):
            raise WireError(f"edge ({u!r}, {v!r}) has a node outside 0..{n - 1}")
        if u == v:
            raise WireError(f"self-loop on node {u}: Max-Cut and Max-Clique need simple graphs")
        key = (min(u, v), max(u, v))
        if key in seen:
            raise WireError(f"edge {key} appears twice")
        seen.add(key)
        edges.append(key)
        weights.append(float(w))
    return Graph(n_nodes=int(n), edges=tuple(edges), weights=tuple(weights))


@dataclass(frozen=True)
class CostDiagonal:
    """The cost Hamiltonian's diagonal: ``C[z] = levels[index[z]]`` or ``values[z]``.

    Attributes:
        n: number of qubits.
        problem: ``"maxcut"`` or ``"maxclique"``.
        index: small-int tensor ``(2**n,)`` (uint8/int16/int32) or None.
        levels: float64 tensor of the distinct cost values the index points to, or None.
        values: float64 tensor ``(2**n,)`` when the cost is not on an integer grid, else None.
        minimum, maximum: the extreme cost values.
    """

    n: int
    problem: str
    index: torch.Tensor | None
    levels: torch.Tensor | None
    values: torch.Tensor | None
    minimum: float
    maximum: float

    @property
    def device(self) -> torch.device:
        return (self.index if self.index is not None else self.values).device

    def dense(self) -> torch.Tensor:
        """All ``2**n`` cost values as float64 (allocates 8 * 2**n bytes)."""
        if self.values is not None:
            return self.values
        return self.levels[self.index.long()]

    def optimum(self, *, max_bitstrings: int = 64) -> tuple[float, list[str]]:
        """The minimum cost and the bitstrings (wire 0 first) that reach it."""
        if self.values is not None:
            hits = torch.nonzero(self.values <= self.minimum + 1e-9).flatten()
        else:
            level = int(torch.argmin(self.levels))
            hits = torch.nonzero(self.index == level).flatten()
        return self.minimum, [bitstring(int(z), self.n) for z in hits[:max_bitstrings].tolist()]


def bitstring(z: int, n: int) -> str:
    """Basis index -> bitstring with wire 0 first (most significant)."""
    return format(z, f"0{n}b")


def _pair_add(acc: torch.Tensor, n: int, i: int, j: int, table: torch.Tensor) -> None:
    """acc[z] += table[bit_i(z), bit_j(z)] for wires i < j, in place by broadcasting."""
    view = acc.view(2**i, 2, 2 ** (j - i - 1), 2, 2 ** (n - j - 1))
    view += table.view(1, 2, 1, 2, 1)


def _single_add(acc: torch.Tensor, n: int, i: int, table: torch.Tensor) -> None:
    view = acc.view(2**i, 2, 2 ** (n - i - 1))
    view += table.view(1, 2, 1)


def _terms(problem: str, g: Graph):
    """(scale, pair terms [(i, j, 2x2 table)], single terms [(i, table)], constant), integer tables if possible."""
    n = g.n_nodes
    if problem == "maxcut":
        ints = all(float(w).is_integer() for w in g.weights)
        pairs = [(i, j, [[0.0, -w], [-w, 0.0]]) for (i, j), w in zip(g.edges, g.weights)]
        return (1.0 if ints else None), pairs, [], 0.0
    if problem == "maxclique":
        present = set(g.edges)
        comp = [(i, j) for i in range(n) for j in range(i + 1, n) if (i, j) not in present]
        # 4C = sum_comp (12 z_i z_j - 3) + sum_i (4 - 8 z_i)
        pairs = [(i, j, [[0.0, 0.0], [0.0, 12.0]]) for i, j in comp]
        singles = [(i, [4.0, -4.0]) for i in range(n)]
        return 0.25, pairs, singles, -3.0 * len(comp)
    raise OperationError(f"unknown QAOA problem {problem!r}; valid: {', '.join(PROBLEMS)}")


def cost_diagonal(graph, problem: str = "maxcut", *, device="cpu", n_nodes: int | None = None,
                  weight: str | None = "weight") -> CostDiagonal:
    """Build the cost diagonal of ``problem`` on ``graph`` directly on ``device``.

    Args:
        graph: networkx graph, :class:`Graph` or edge list (see :func:`as_graph`).
        problem: ``"maxcut"`` or ``"maxclique"``.
        device: torch device the diagonal lives on (built there, never copied from host).
        n_nodes: node count for an edge list.
        weight: edge attribute with the weight; None = all weights 1.

    Returns:
        A :class:`CostDiagonal`.

    Example:
        >>> d = cost_diagonal([(0, 1), (1, 2)], "maxcut")
        >>> d.optimum()
        (-2.0, ['010', '101'])
    """
    if problem not in PROBLEMS:
        raise OperationError(f"unknown QAOA problem {problem!r}; valid: {', '.join(PROBLEMS)}")
    g = as_graph(graph, n_nodes=n_nodes, weight=weight)
    n = g.n_nodes
    if n < 1:
        raise WireError("the graph has no nodes; QAOA needs at least one qubit")
    device = torch.device(device)
    unit, pairs, singles, const = _terms(problem, g)
    size = 2**n
    if unit is not None:
        # integer grid: accumulate in int32 (exact), then shift to a small unsigned index
        acc = torch.zeros(size, dtype=torch.int32, device=device)
        for i, j, t in pairs:
            _pair_add(acc, n, i, j, torch.tensor(t, dtype=torch.int32, device=device))
        for i, t in singles:
            _single_add(acc, n, i, torch.tensor(t, dtype=torch.int32, device=device))
        lo, hi = int(acc.min()), int(acc.max())
        span = hi - lo + 1
        acc -= lo
        idx_dtype = torch.uint8 if span <= 256 else (torch.int16 if span <= 32767 else torch.int32)
        index = acc.to(idx_dtype) if idx_dtype is not torch.int32 else acc
        levels = (torch.arange(span, dtype=torch.float64, device=device) + lo + const) * unit
        return CostDiagonal(n=n, problem=problem, index=index, levels=levels, values=None,
                            minimum=(lo + const) * unit, maximum=(hi + const) * unit)
    values = torch.zeros(size, dtype=torch.float64, device=device)
    for i, j, t in pairs:
        _pair_add(values, n, i, j, torch.tensor(t, dtype=torch.float64, device=device))
    values += const
    return CostDiagonal(n=n, problem=problem, index=None, levels=None, values=values,
                        minimum=float(values.min()), maximum=float(values.max()))


def random_graph(n_nodes: int, n_edges: int, *, seed: int) -> Graph:
    """``networkx.gnm_random_graph(n, m, seed)`` as a :class:`Graph` (networkx required)."""
    import networkx as nx

    return as_graph(nx.gnm_random_graph(n_nodes, n_edges, seed=seed))


__all__ = ["Graph", "CostDiagonal", "as_graph", "cost_diagonal", "random_graph", "bitstring", "PROBLEMS"]
