"""QAOA problems as cost diagonals, built directly where they are used: numpy arrays on the CPU,
torch tensors on a CUDA device (torch is imported only then).

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

import numpy as np

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


class _Numpy:
    """The few array operations the builder needs, on numpy (CPU)."""

    int32, uint8, int16, float64 = np.int32, np.uint8, np.int16, np.float64

    def __init__(self, device="cpu"):
        self.device = "cpu"

    def zeros(self, size, dtype):
        return np.zeros(size, dtype=dtype)

    def table(self, values, dtype):
        return np.array(values, dtype=dtype)

    def arange(self, size):
        return np.arange(size, dtype=np.float64)

    @staticmethod
    def cast(a, dtype):
        return a.astype(dtype)


class _Torch:
    """The same operations on torch tensors on ``device`` (built there, never copied from the host)."""

    def __init__(self, device):
        import torch

        self.torch, self.device = torch, torch.device(device)
        self.int32, self.uint8, self.int16, self.float64 = torch.int32, torch.uint8, torch.int16, torch.float64

    def zeros(self, size, dtype):
        return self.torch.zeros(size, dtype=dtype, device=self.device)

    def table(self, values, dtype):
        return self.torch.tensor(values, dtype=dtype, device=self.device)

    def arange(self, size):
        return self.torch.arange(size, dtype=self.torch.float64, device=self.device)

    @staticmethod
    def cast(a, dtype):
        return a.to(dtype)


def _on_cpu(device) -> bool:
    return (getattr(device, "type", None) or str(device).split(":", 1)[0]) == "cpu"


def _flat(mask) -> np.ndarray:
    """Indices where ``mask`` holds, as a host int64 array (numpy or torch mask)."""
    if isinstance(mask, np.ndarray):
        return np.flatnonzero(mask)
    return mask.nonzero().flatten().cpu().numpy()


@dataclass(frozen=True)
class CostDiagonal:
    """The cost Hamiltonian's diagonal: ``C[z] = levels[index[z]]`` or ``values[z]``.

    Arrays are numpy on the CPU, torch tensors on a CUDA device.

    Attributes:
        n: number of qubits.
        problem: ``"maxcut"`` or ``"maxclique"``.
        index: small-int array ``(2**n,)`` (uint8/int16/int32) or None.
        levels: float64 array of the distinct cost values the index points to, or None.
        values: float64 array ``(2**n,)`` when the cost is not on an integer grid, else None.
        minimum, maximum: the extreme cost values.
    """

    n: int
    problem: str
    index: object
    levels: object
    values: object
    minimum: float
    maximum: float

    @property
    def device(self):
        """``"cpu"`` for numpy arrays, else the torch tensors' device."""
        a = self.index if self.index is not None else self.values
        return "cpu" if isinstance(a, np.ndarray) else a.device

    def dense(self):
        """All ``2**n`` cost values as float64 (allocates 8 * 2**n bytes)."""
        if self.values is not None:
            return self.values
        index = self.index if isinstance(self.index, np.ndarray) else self.index.long()
        return self.levels[index]

    def cost(self, z: int) -> float:
        """The cost of basis state ``z``."""
        if self.values is not None:
            return float(self.values[z])
        return float(self.levels[int(self.index[z])])

    def optimum(self, *, max_bitstrings: int = 64) -> tuple[float, list[str]]:
        """The minimum cost and the bitstrings (wire 0 first) that reach it."""
        if self.values is not None:
            hits = _flat(self.values <= self.minimum + 1e-9)
        else:
            level = int(self.levels.argmin())
            hits = _flat(self.index == level)
        return self.minimum, [bitstring(int(z), self.n) for z in hits[:max_bitstrings].tolist()]


def bitstring(z: int, n: int) -> str:
    """Basis index -> bitstring with wire 0 first (most significant)."""
    return format(z, f"0{n}b")


def _pair_add(acc, n: int, i: int, j: int, table) -> None:
    """acc[z] += table[bit_i(z), bit_j(z)] for wires i < j, in place by broadcasting (numpy or torch)."""
    view = acc.reshape(2**i, 2, 2 ** (j - i - 1), 2, 2 ** (n - j - 1))
    view += table.reshape(1, 2, 1, 2, 1)


def _single_add(acc, n: int, i: int, table) -> None:
    view = acc.reshape(2**i, 2, 2 ** (n - i - 1))
    view += table.reshape(1, 2, 1)


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
        device: where the diagonal lives: ``"cpu"`` (numpy arrays) or a torch device such as
            ``"cuda"`` (torch tensors, built there, never copied from the host).
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
    xp = _Numpy() if _on_cpu(device) else _Torch(device)
    unit, pairs, singles, const = _terms(problem, g)
    size = 2**n
    if unit is not None:
        # integer grid: accumulate in int32 (exact), then shift to a small unsigned index
        acc = xp.zeros(size, xp.int32)
        for i, j, t in pairs:
            _pair_add(acc, n, i, j, xp.table(t, xp.int32))
        for i, t in singles:
            _single_add(acc, n, i, xp.table(t, xp.int32))
        lo, hi = int(acc.min()), int(acc.max())
        span = hi - lo + 1
        acc -= lo
        idx_dtype = xp.uint8 if span <= 256 else (xp.int16 if span <= 32767 else xp.int32)
        index = xp.cast(acc, idx_dtype) if idx_dtype is not xp.int32 else acc
        levels = (xp.arange(span) + lo + const) * unit
        return CostDiagonal(n=n, problem=problem, index=index, levels=levels, values=None,
                            minimum=(lo + const) * unit, maximum=(hi + const) * unit)
    values = xp.zeros(size, xp.float64)
    for i, j, t in pairs:
        _pair_add(values, n, i, j, xp.table(t, xp.float64))
    values += const
    return CostDiagonal(n=n, problem=problem, index=None, levels=None, values=values,
                        minimum=float(values.min()), maximum=float(values.max()))


def random_graph(n_nodes: int, n_edges: int, *, seed: int) -> Graph:
    """``networkx.gnm_random_graph(n, m, seed)`` as a :class:`Graph`: the same graph, its edges in
    the same order, without networkx (whose import costs a job a quarter of a second).

    The G(n, m) rejection sampler: node pairs drawn with ``random.Random(seed).choice`` until ``m``
    distinct edges are found; ``m`` of at least every pair gives the complete graph. Edges are
    listed as networkx iterates them (node by node, neighbours in insertion order).
    """
    import random
    from itertools import combinations

    n, m = int(n_nodes), int(n_edges)
    if n <= 1:
        return Graph(n_nodes=max(n, 0), edges=(), weights=())
    if m >= n * (n - 1) / 2:
        edges = tuple(combinations(range(n), 2))
        return Graph(n_nodes=n, edges=edges, weights=(1.0,) * len(edges))
    rng, nodes = random.Random(seed), list(range(n))
    adjacent: dict[int, dict[int, None]] = {v: {} for v in nodes}  # insertion-ordered, as networkx's
    found = 0
    while found < m:
        u, v = rng.choice(nodes), rng.choice(nodes)
        if u == v or v in adjacent[u]:
            continue
        adjacent[u][v] = adjacent[v][u] = None
        found += 1
    seen: set[int] = set()
    edges = []
    for u in nodes:
        edges += [(min(u, v), max(u, v)) for v in adjacent[u] if v not in seen]
        seen.add(u)
    return Graph(n_nodes=n, edges=tuple(edges), weights=(1.0,) * len(edges))


__all__ = ["Graph", "CostDiagonal", "as_graph", "cost_diagonal", "random_graph", "bitstring", "PROBLEMS"]
