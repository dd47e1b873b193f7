"""Steps from operations: one call's parameters bound into the data of a plan's steps.

``step_for(op)`` is the unfused step of one operation; ``layer_step`` multiplies each wire's run
of 1-qubit gates into one 2x2; ``diagonal_steps`` turns a block of commuting diagonal gates into
one diagonal over the union of their wires, or, for Z-rotations spanning the register, into a
phase lookup; ``ladder_tables`` gives the index maps of a run of CNOTs / SWAPs (parameter-free:
built once, when the plan is). See ``README.md`` beside this file for why each is exact.
"""
from __future__ import annotations

import functools

import numpy as np
import torch

from .gates import GATES, gate_diagonal, gate_matrix, gate_matrix_stack
from .steps import Dense, Diagonal, Layer, Permutation, PhaseLookup, Swap

#: Gates whose diagonal is exp(-i theta/2 * Z...Z) on their wires.
ZROT = frozenset({"RZ", "IsingZZ", "MultiRZ"})
#: Self-inverse two-qubit permutations run as amplitude swaps (no arithmetic).
PERMUTATIONS = frozenset({"CNOT", "SWAP"})
#: Most distinct angles' combinations a phase lookup's table may hold.
_MAX_TABLE = 1 << 16


def step_for(op, n: int, *, dtype, device):
    """The unfused step of one IR operation."""
    k = len(op.wires)
    if op.name in PERMUTATIONS:
        return Swap(tuple(op.wires), op.name == "CNOT", gate_matrix(op.name, (), 2, dtype, device))
    if GATES[op.name].is_diagonal:
        return Diagonal(tuple(op.wires), gate_diagonal(op.name, op.params, k, dtype, device, op.adjoint).contiguous())
    return Dense(tuple(op.wires), gate_matrix(op.name, op.params, k, dtype, device, op.adjoint).contiguous())


_EYE2 = np.eye(2, dtype=complex)


def run_matrices(runs, ops) -> np.ndarray:
    """``(R, L, P, 2, 2)`` complex128 for ``runs`` ``((wire, op indices), ...)``: gate ``j`` of run
    ``r`` at ``[r, j]`` (circuit order), the identity past a run's end; ``L`` the longest run,
    ``P`` 1 or the broadcast batch. All the runs' matrices are built in one batch."""
    return _arranged(gate_matrix_stack([ops[k] for _, idx in runs for k in idx], 1), runs)


def layers_run_matrices(layers, ops) -> list:
    """:func:`run_matrices` of each entry of ``layers`` (a list of ``runs``), the matrices of all
    of them built in one batch (a circuit's layers cost a few numpy calls, not a few each), or
    layer by layer when a parameter is broadcast (each layer keeps its own ``P``)."""
    mats = gate_matrix_stack([ops[k] for runs in layers for _, idx in runs for k in idx], 1)
    if mats.shape[1] != 1:
        return [run_matrices(runs, ops) for runs in layers]
    out, start = [], 0
    for runs in layers:
        stop = start + sum(len(idx) for _, idx in runs)
        out.append(_arranged(mats[start:stop], runs))
        start = stop
    return out


def _arranged(mats: np.ndarray, runs) -> np.ndarray:
    """The ``(K, P, 2, 2)`` matrices of ``runs``' gates (in order) as :func:`run_matrices`' array."""
    lengths = [len(idx) for _, idx in runs]
    R, L = len(runs), max(lengths)
    if all(m == L for m in lengths):
        return mats.reshape((R, L) + mats.shape[1:])
    out = np.empty((R, L) + mats.shape[1:], dtype=complex)
    out[...] = _EYE2
    out[np.repeat(np.arange(R), lengths), np.concatenate([np.arange(m) for m in lengths])] = mats
    return out


def run_products(mats: np.ndarray) -> np.ndarray:
    """``(R, P, 2, 2)``: each run's product ``g_L ... g_1`` of :func:`run_matrices`' ``mats``."""
    out = mats[:, 0]
    for j in range(1, mats.shape[1]):
        out = mats[:, j] @ out
    return out


def layer_step(runs, ops, *, dtype, device, mats=None):
    """The step of 1-qubit gates on distinct wires, ``runs`` ``((wire, op indices), ...)``: a
    :class:`Dense` for one wire, else a :class:`Layer` (``mats``: their :func:`run_matrices`
    when the caller has them)."""
    mats = np.ascontiguousarray(run_products(run_matrices(runs, ops) if mats is None else mats))
    if len(runs) == 1:
        return Dense((runs[0][0],), torch.from_numpy(mats[0]).to(device=device, dtype=dtype))
    return Layer(tuple(w for w, _ in runs), torch.from_numpy(mats).to(device=device, dtype=dtype))


def _expand_diag(d: torch.Tensor, wires, union) -> torch.Tensor:
    """Broadcast a (P, 2**k) diagonal on ``wires`` to (P, 2, ..., 2) over ``union``."""
    P, k = d.shape[0], len(wires)
    t = d.reshape((P,) + (2,) * k)
    order = sorted(range(k), key=lambda i: union.index(wires[i]))
    t = t.permute([0] + [1 + i for i in order])
    shape = [P] + [1] * len(union)
    for w in wires:
        shape[1 + union.index(w)] = 2
    return t.reshape(shape)


def diagonal_product(block, union, *, dtype, device) -> Diagonal:
    """One :class:`Diagonal` over ``union`` for the commuting diagonal gates ``block``."""
    acc = None
    for o in block:
        d = gate_diagonal(o.name, o.params, len(o.wires), dtype, device, o.adjoint)
        e = _expand_diag(d, tuple(o.wires), union) if o.wires else d[:, :1].reshape([-1] + [1] * len(union))
        acc = e if acc is None else acc * e
    acc = acc.expand([acc.shape[0]] + [2] * len(union)).reshape(acc.shape[0], -1)
    return Diagonal(tuple(union), acc.contiguous())


def diagonal_steps(block, union, n: int, *, lookup: bool, dtype, device, cache=None) -> list:
    """The steps of a block of commuting diagonal gates: one product over ``union``, or with
    ``lookup`` (Z-rotations with scalar angles over most of the register) a phase lookup, or,
    when its table would be too large or numba is missing, one step per gate."""
    if not lookup:
        return [diagonal_product(block, list(union), dtype=dtype, device=device)]
    try:
        step = zrot_lookup(block, n, dtype=dtype, device=device, cache=cache)
    except ImportError:  # pragma: no cover - numba missing
        step = None
    return [step] if step is not None else [step_for(o, n, dtype=dtype, device=device) for o in block]


def zrot_lookup(ops, n: int, *, dtype, device, cache=None):
    """A :class:`PhaseLookup` for a block of Z-rotations with scalar angles, or None (too many
    distinct angles). Gates are grouped by angle; the index (per basis state, the mixed-radix
    count of odd-parity gates per group) is built once per grouping and kept in ``cache``."""
    from .fastkernels import kernel  # numba optional: ImportError -> one step per gate

    groups: dict[float, list] = {}
    for op in ops:
        p = op.params[0]
        theta = float(np.real(np.asarray(p.detach().cpu() if torch.is_tensor(p) else p)))
        groups.setdefault(-theta if op.adjoint else theta, []).append(tuple(op.wires))
    thetas = list(groups)
    sizes = [len(groups[t]) + 1 for t in thetas]
    if int(np.prod(sizes)) > _MAX_TABLE:
        return None
    key = ("zrot-index", n, str(device), tuple(tuple(groups[t]) for t in thetas))
    index = cache.get(key) if cache is not None else None
    if index is None:
        masks, gid = [], []
        for g, t in enumerate(thetas):
            for ws in groups[t]:
                masks.append(sum(1 << (n - 1 - w) for w in ws))
                gid.append(g)
        strides = np.cumprod([1] + sizes[:-1]).astype(np.int64)
        idx = np.empty(2**n, dtype=np.int32)
        kernel("parity_index", idx.shape[0])(idx, np.array(masks, dtype=np.int64), np.array(gid, dtype=np.int64),
                                             strides)
        index = torch.from_numpy(idx).to(device)
        if cache is not None:
            cache.put(key, index, idx.nbytes)
    angles = _mixed_table(thetas, sizes)
    table = torch.polar(torch.ones_like(angles), angles).to(dtype).to(device).reshape(1, -1)
    return PhaseLookup(tuple(range(n)), table, index)


def _mixed_table(thetas, sizes) -> torch.Tensor:
    """angle[j] for j = sum_g stride_g * odd_g (stride_0 = 1)."""
    total = torch.zeros(1, dtype=torch.float64)
    for t, m in zip(thetas, sizes):
        odd = torch.arange(m, dtype=torch.float64)
        a = -t / 2 * ((m - 1) - 2 * odd)
        total = (a.reshape(-1, 1) + total.reshape(1, -1)).reshape(-1)
    return total


def _index_map(swaps, n):
    """``v -> g(v)``, the basis-index map of the ``(wires, ctrl)`` swaps applied in order."""
    steps = [(1 << (n - 1 - w[0]), 1 << (n - 1 - w[1]), ctrl) for w, ctrl in swaps]

    def g(v: int) -> int:
        for s0, s1, ctrl in steps:
            if ctrl:
                v ^= s1 if v & s0 else 0
            elif bool(v & s0) != bool(v & s1):
                v ^= s0 | s1
        return v

    return g


def _digit_tables(images) -> np.ndarray:
    """(4, 1024) tables of a linear map from the images of the basis bits: the map of ``j`` is
    the XOR of ``t[d][(j >> 10 d) & 1023]`` over the four ten-bit digits."""
    t = np.zeros((4, 1024), dtype=np.int64)
    for d in range(4):
        for b in range(10):
            img = images[10 * d + b] if 10 * d + b < len(images) else 0
            t[d, 1 << b:2 << b] = t[d, :1 << b] ^ img
    return t


@functools.lru_cache(maxsize=64)
def ladder_tables(swaps, n: int) -> np.ndarray:
    """(2, 4, 1024) gather tables of a run of CNOTs / SWAPs, ``swaps`` ``((wires, ctrl), ...)``
    (n <= 40): the new state is ``psi'[j] = psi[g^-1(j)]``, ``g`` the run's index map; row 0
    gathers ``g^-1`` (the run), row 1 ``g`` (its inverse: each gate is its own inverse, so
    ``g^-1`` is the run in reverse order). Kept for the next plan of the same run (read-only)."""
    g = _index_map(swaps, n)
    ginv = _index_map(swaps[::-1], n)
    basis = [1 << b for b in range(n)]
    tables = np.stack([_digit_tables([ginv(v) for v in basis]), _digit_tables([g(v) for v in basis])])
    tables.flags.writeable = False
    return tables


def permutation_step(swaps, tables, *, dtype, device) -> Permutation:
    """The :class:`Permutation` of a run, ``swaps`` ``((wires, ctrl), ...)``, from its tables."""
    wires = tuple(sorted({w for ws, _ in swaps for w in ws}))
    return Permutation(wires, tables, _swap_steps(swaps, dtype, torch.device(device)))


@functools.lru_cache(maxsize=256)
def _swap_steps(swaps, dtype, device) -> tuple:
    """The :class:`Swap` steps of a run (parameter-free: their matrices, read only by the
    reference path, are made once per run, dtype and device)."""
    return tuple(Swap(tuple(w), ctrl, gate_matrix("CNOT" if ctrl else "SWAP", (), 2, dtype, device))
                 for w, ctrl in swaps)
