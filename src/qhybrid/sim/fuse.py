"""Lowering and fusion: IR operations -> a short list of kernel calls (KOps).

``lower(ops, n, dtype=..., device=..., fuse=True, cache=None)``:

* single-qubit gates on one wire are multiplied into one pending 2x2 per wire
  (a diagonal single-qubit gate joins the pending 2x2 unless a diagonal block
  is open); pending 2x2s are emitted together, as one blocked layer;
* consecutive diagonal gates (RZ, PhaseShift, CZ, IsingZZ, MultiRZ, controlled
  phases, diagonal unitaries ...) pile up into one diagonal block, applied in
  one pass: as one small diagonal over the union of their wires, or - when
  that union spans most of the register and all the gates are Z-rotations
  with plain (unbroadcast) angles, as in a QAOA cost layer - as a phase
  lookup ``table[index[z]]`` whose integer index is built once per block
  shape and kept in ``cache``;
* pending 1q blocks and the diagonal block act on disjoint wires, so they
  commute; any gate that touches their wires flushes them first;
* runs of at least ``PERM_MIN`` CNOTs / SWAPs (entangling ladders) become one
  index permutation ``j -> h(j)``, linear over GF(2), applied as one gather
  pass (:func:`perm_kop`).

See ``README.md`` beside this file for why this is exact.
"""
from __future__ import annotations

import numpy as np
import torch

from .apply import KOp
from .gates import GATES, gate_diagonal, gate_matrices_np, gate_matrix

#: Gates whose diagonal is exp(-i theta/2 * Z...Z) on their wires.
ZROT = {"RZ", "IsingZZ", "MultiRZ"}
_MAX_SMALL_DIAG = 12
#: Self-inverse two-qubit permutations run as amplitude swaps (no arithmetic).
_PERMUTATIONS = {"CNOT", "SWAP"}
#: Shortest run of CNOTs / SWAPs worth one gather pass (each swap touches half the state).
PERM_MIN = 3


def _index_map(swaps, n):
    """``v -> g(v)``, the basis-index map of the swap KOps applied in order."""
    steps = [(1 << (n - 1 - k.wires[0]), 1 << (n - 1 - k.wires[1]), k.ctrl) for k in swaps]

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


def perm_kop(swaps, n: int, cache=None) -> KOp:
    """One ``perm`` KOp for a run of CNOT / SWAP KOps (n <= 40). The new state is
    ``psi'[j] = psi[g^-1(j)]`` with ``g`` the index map of the run; the tables of ``g^-1``
    (the gather of the run) and of ``g`` (the gather of its inverse) are both kept, and kept in
    ``cache`` by the run's gates (the adjoint sweep asks again for the run it undoes)."""
    key = ("perm", n, tuple((k.wires, k.ctrl) for k in swaps))
    tables = cache.get(key) if cache is not None else None
    if tables is None:
        g = _index_map(swaps, n)
        ginv = _index_map(swaps[::-1], n)  # each CNOT / SWAP is its own inverse
        basis = [1 << b for b in range(n)]
        tables = np.stack([_digit_tables([ginv(v) for v in basis]), _digit_tables([g(v) for v in basis])])
        if cache is not None:
            cache.put(key, tables, tables.nbytes)
    wires = tuple(sorted({w for k in swaps for w in k.wires}))
    return KOp("perm", wires, tables, list(swaps))


def merge_permutations(kops: list, n: int, cache=None) -> list:
    """Replace runs of at least ``PERM_MIN`` swap KOps by one :func:`perm_kop`."""
    if n > 40:
        return kops
    return _merge_runs(kops, lambda k: k.kind == "swap",
                       lambda run: [perm_kop(run, n, cache)] if len(run) >= PERM_MIN else run)


def _merge_runs(kops: list, member, merge) -> list:
    """``kops`` with each maximal run of KOps for which ``member(k)`` holds replaced by
    ``merge(run)`` (a list)."""
    out, run = [], []
    for k in kops:
        if member(k):
            run.append(k)
            continue
        if run:
            out.extend(merge(run))
            run = []
        out.append(k)
    if run:
        out.extend(merge(run))
    return out


def kop_for(op, n: int, *, dtype, device) -> KOp:
    """The unfused kernel call of one IR operation."""
    k = len(op.wires)
    gate = GATES[op.name]
    if op.name in _PERMUTATIONS:
        return KOp("swap", tuple(op.wires), gate_matrix(op.name, (), 2, dtype, device), ctrl=op.name == "CNOT")
    if gate.is_diagonal:
        return KOp("diag", tuple(op.wires), gate_diagonal(op.name, op.params, k, dtype, device, op.adjoint).contiguous())
    return KOp("dense", tuple(op.wires), gate_matrix(op.name, op.params, k, dtype, device, op.adjoint).contiguous())


def _expand_diag(d: torch.Tensor, wires, union) -> torch.Tensor:
    """Broadcast a (P, 2**k) diagonal on ``wires`` to (P, 2**len(union))."""
    P, k = d.shape[0], len(wires)
    t = d.reshape((P,) + (2,) * k)
    order = sorted(range(k), key=lambda i: union.index(wires[i]))
    t = t.permute([0] + [1 + i for i in order])
    shape = [P] + [1] * len(union)
    for w in wires:
        shape[1 + union.index(w)] = 2
    return t.reshape(shape)


def _zrot_lookup(ops, n, dtype, device, cache):
    """A lookup KOp for a block of Z-rotations with scalar angles, or None."""
    from .fastkernels import kernel  # numba optional: ImportError -> unfused

    groups: dict[float, list] = {}
    for op in ops:
        theta = float(np.real(np.asarray(op.params[0] if not torch.is_tensor(op.params[0])
                                         else op.params[0].detach().cpu())))
        groups.setdefault(-theta if op.adjoint else theta, []).append(tuple(op.wires))
    thetas = list(groups)
    sizes = [len(groups[t]) + 1 for t in thetas]
    if int(np.prod(sizes)) > 1 << 16:
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
        kernel("parity_index", idx.shape[0])(idx, np.array(masks, dtype=np.int64), np.array(gid, dtype=np.int64), strides)
        index = torch.from_numpy(idx).to(device)
        if cache is not None:
            cache.put(key, index, idx.nbytes)
    table = _mixed_table(thetas, sizes)
    return KOp("lookup", tuple(range(n)), torch.polar(torch.ones_like(table), table).to(dtype).to(device).reshape(1, -1), index)


def _mixed_table(thetas, sizes) -> torch.Tensor:
    """angle[j] for j = sum_g stride_g * odd_g (stride_0 = 1)."""
    total = torch.zeros(1, dtype=torch.float64)
    for t, m in zip(thetas, sizes):
        odd = torch.arange(m, dtype=torch.float64)
        a = -t / 2 * ((m - 1) - 2 * odd)
        total = (a.reshape(-1, 1) + total.reshape(1, -1)).reshape(-1)
    return total


def lower(ops, n: int, *, dtype=torch.complex128, device="cpu", fuse: bool = True, cache=None) -> list:
    """Turn IR operations into kernel calls, fusing when ``fuse`` (see module docstring)."""
    if not fuse:
        return [kop_for(op, n, dtype=dtype, device=device) for op in ops if op.name != "Identity"]
    out: list[KOp] = []
    pend1: dict[int, np.ndarray] = {}  # wire -> (P, 2, 2) complex128, multiplied in numpy
    diag_ops: list = []
    diag_wires: set = set()
    ones = [op for op in ops if len(op.wires) == 1 and op.name != "Identity"]
    mats1 = dict(zip(map(id, ones), gate_matrices_np(ones, 1)))  # one numpy call per gate name

    def flush1(wires):
        # if any of ``wires`` has a pending 2x2, emit them all: they commute with what follows
        # on other wires, and one layer runs as one blocked pass
        if any(w in pend1 for w in wires):
            for w in list(pend1):
                m = torch.from_numpy(np.ascontiguousarray(pend1.pop(w)))
                out.append(KOp("dense", (w,), m.to(device=device, dtype=dtype)))

    def flush_diag():
        if not diag_ops:
            return
        union = sorted(diag_wires)
        zrot = all(o.name in ZROT and np.ndim(o.params[0]) == 0 for o in diag_ops)
        if len(union) <= max(_MAX_SMALL_DIAG, n - 4) or len(diag_ops) == 1 or not zrot:
            if len(union) > max(_MAX_SMALL_DIAG, n - 4) and len(diag_ops) > 1:
                out.extend(kop_for(o, n, dtype=dtype, device=device) for o in diag_ops)
            else:
                acc = None
                for o in diag_ops:
                    d = gate_diagonal(o.name, o.params, len(o.wires), dtype, device, o.adjoint)
                    e = _expand_diag(d, tuple(o.wires), union) if o.wires else d[:, :1].reshape([-1] + [1] * len(union))
                    acc = e if acc is None else acc * e
                acc = acc.expand([acc.shape[0]] + [2] * len(union)).reshape(acc.shape[0], -1)
                out.append(KOp("diag", tuple(union), acc.contiguous()))
        else:
            kop = None
            try:
                kop = _zrot_lookup(diag_ops, n, dtype, device, cache)
            except ImportError:  # pragma: no cover
                kop = None
            out.extend([kop] if kop is not None else [kop_for(o, n, dtype=dtype, device=device) for o in diag_ops])
        diag_ops.clear()
        diag_wires.clear()

    for op in ops:
        if op.name == "Identity":
            continue
        gate = GATES[op.name]
        ws = tuple(op.wires)
        if len(ws) == 1 and (not gate.is_diagonal or ws[0] in pend1 or not diag_ops):
            if ws[0] in diag_wires:
                flush_diag()
            m = mats1[id(op)]
            prev = pend1.get(ws[0])
            pend1[ws[0]] = m if prev is None else np.matmul(m, prev)
        elif gate.is_diagonal:
            flush1(ws)
            diag_ops.append(op)
            diag_wires.update(ws)
        else:
            flush1(ws)
            if diag_wires.intersection(ws):
                flush_diag()
            out.append(kop_for(op, n, dtype=dtype, device=device))
    flush_diag()
    flush1(list(pend1))
    return merge_permutations(merge_layers(out), n, cache)


def merge_layers(kops: list) -> list:
    """Merge consecutive 1-qubit dense KOps into one ``layer`` KOp (blocked kernel)."""

    def layer(run):
        if len(run) == 1:
            return run
        P = max(k.data.shape[0] for k in run)
        data = torch.stack([k.data.expand(P, 2, 2) for k in run]).contiguous()
        return [KOp("layer", tuple(k.wires[0] for k in run), data)]

    return _merge_runs(kops, lambda k: k.kind == "dense" and len(k.wires) == 1, layer)
