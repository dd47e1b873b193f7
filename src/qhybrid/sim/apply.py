"""Kernel dispatch: apply dense blocks, diagonals and phase tables in place.

A :class:`KOp` is a gate ready to run: a ``(P, d, d)`` dense block or a
``(P, d)`` diagonal on ``wires``, a phase lookup (``table[P, m]`` indexed by
a cached ``index[2**n]``), or a run of CNOTs / SWAPs as one index permutation
(``perm``: one gather pass into a scratch buffer and a copy back, or into a spare buffer
that then holds the state, see :func:`permute_into`). ``apply_kop(state, kop, n)`` updates ``state``
(``(B, 2**n)``) in place. On CPU with ``fast=True`` the numba kernels of
:mod:`qhybrid.sim.fastkernels` run (one pass per gate); otherwise the torch
reference path (``kernels.apply_matrix`` and broadcast multiplies), which is
the same code on CUDA. Kernels trust their inputs.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import torch

from . import kernels

from .jit import notice

try:  # numba is a dependency, but a platform without its wheels runs the torch kernels
    from . import fastkernels as _fk
except ImportError:  # pragma: no cover
    _fk = None


@dataclass
class KOp:
    """One kernel call: ``kind`` is ``dense``, ``diag``, ``swap``, ``lookup`` or ``layer``
    (several 1-qubit gates on distinct wires, ``data`` (R, P, 2, 2))."""

    kind: str
    wires: tuple
    data: Any  # (P,d,d) | (P,d) | (P, m) table | perm: (2, 4, 1024) int64 gather tables
    index: Optional[Any] = None  # lookup: (2**n,) int32 indices into the table; perm: the swap KOps
    ctrl: bool = False  # swap: CNOT (True) or SWAP (False); data holds the 4x4 matrix

    def inverse(self) -> "KOp":
        if self.kind == "swap":
            return self
        if self.kind == "perm":  # the inverse map's tables are stored beside the map's
            return KOp("perm", self.wires, np.ascontiguousarray(self.data[::-1]), self.index[::-1])
        if self.kind == "layer":
            return KOp("layer", self.wires, self.data.conj().transpose(-1, -2).contiguous())
        if self.kind == "dense":
            return KOp("dense", self.wires, self.data.conj().transpose(-1, -2).contiguous())
        return KOp(self.kind, self.wires, self.data.conj().contiguous(), self.index)


def use_fast(state: torch.Tensor, fast: bool) -> bool:
    """Whether the numba kernels apply to this state (a one-line notice when numba is missing)."""
    if fast and _fk is None and state.device.type == "cpu":
        notice()
    return fast and _fk is not None and state.device.type == "cpu"


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().resolve_conj().contiguous().numpy()


def scratch_buffer(N: int, dtype, cache=None) -> np.ndarray:
    """A (N,) numpy buffer of ``dtype`` for out-of-place passes, kept in ``cache`` when given
    (a fresh buffer is page-faulted in at every call: as slow as the pass itself)."""
    key = ("scratch", N, np.dtype(dtype).str)
    buf = cache.get(key) if cache is not None else None
    if buf is None:
        buf = np.empty(N, dtype=dtype)
        if cache is not None:
            cache.put(key, buf, buf.nbytes)
    return buf


def permute_into(out: torch.Tensor, state: torch.Tensor, kop: KOp) -> torch.Tensor:
    """``out`` (another buffer) <- the ``perm`` KOp applied to ``state``, in one gather pass
    (fast path): the caller's spare buffer then holds the state, no copy back."""
    _fk.kernel("permute_into", state.shape[1])(out.numpy(), state.numpy(), kop.data[0])
    return out


def apply_kop(state: torch.Tensor, kop: KOp, n: int, *, fast: bool = True, cache=None) -> torch.Tensor:
    """Apply ``kop`` to ``state`` (B, 2**n) in place and return it (``cache`` holds scratch)."""
    k = len(kop.wires)
    if kop.kind == "perm":
        if use_fast(state, fast):
            st = state.numpy()
            scratch = scratch_buffer(st.shape[1], st.dtype, cache)[None]
            for b in range(st.shape[0]):  # through one row of scratch, then back
                _fk.kernel("permute_into", st.shape[1])(scratch, st[b:b + 1], kop.data[0])
                state[b].copy_(torch.from_numpy(scratch[0]))
        else:
            for sub in kop.index:
                apply_kop(state, sub, n, fast=fast)
        return state
    if kop.kind == "lookup":
        if use_fast(state, fast):
            _fk.kernel("phase_lookup", state.shape[1])(state.numpy(), _np(kop.data), kop.index.numpy())
        else:
            state.mul_(kop.data[:, kop.index.long()])
        return state
    if kop.kind == "layer":
        apply_layer(state, kop, n, fast=fast)
        return state
    if kop.kind == "swap":
        if use_fast(state, fast):
            # serial on purpose: a pure copy gains nothing from threads, and measured slower with them
            _fk.kernel("swap_pairs", 0)(state.numpy(), 1 << (n - 1 - kop.wires[0]),
                                                     1 << (n - 1 - kop.wires[1]), kop.ctrl)
        else:
            state.copy_(kernels.apply_matrix(state, kop.data[0], list(kop.wires), n))
        return state
    if kop.kind == "diag":
        if k == 0:
            state.mul_(kop.data[:, :1])
        elif k == n and list(kop.wires) == list(range(n)):
            state.mul_(kop.data)
        elif use_fast(state, fast):
            shifts = np.array([n - 1 - w for w in kop.wires], dtype=np.int64)
            _fk.kernel("apply_diag", state.shape[1])(state.numpy(), _np(kop.data), shifts)
        else:
            state.copy_(kernels.apply_diagonal(state, kop.data, list(kop.wires), n))
        return state
    if use_fast(state, fast) and k <= 2:
        if k == 1:
            _fk.kernel("apply_1q", state.shape[1])(state.numpy(), _np(kop.data), 1 << (n - 1 - kop.wires[0]))
        else:
            _fk.kernel("apply_2q", state.shape[1])(state.numpy(), _np(kop.data), 1 << (n - 1 - kop.wires[0]), 1 << (n - 1 - kop.wires[1]))
        return state
    m = kop.data if kop.data.shape[0] > 1 else kop.data[0]
    state.copy_(kernels.apply_matrix(state, m, list(kop.wires), n))
    return state


#: Row bits per chunk of the planar layer kernels: chunks of ``8 * 2**ROW_BITS`` amplitudes
#: (128 KiB of planes per state), which stay in L2 while every gate of the pass runs.
ROW_BITS = 10


def _bit_combinations(bits) -> np.ndarray:
    """Every index made of the given bits: ``sum_k ((i >> k) & 1) << bits[k]``, i < 2**len."""
    idx = np.arange(1 << len(bits), dtype=np.int64)
    out = np.zeros_like(idx)
    for k, b in enumerate(bits):
        out |= ((idx >> k) & 1) << b
    return out


@functools.lru_cache(maxsize=256)
def _passes(n: int, bits: tuple) -> tuple:
    N = 1 << n
    if n <= 6:
        z = np.zeros(1, dtype=np.int64)
        return ((tuple(range(len(bits))), np.array([1 << b for b in bits], dtype=np.int64), z, z, N, False),)
    out = []
    # pass A: columns bits 0-2, rows bits 3.., planes column-major: bits 0-2 and 6.. are >= 8 apart
    rows = list(range(3, min(n, 3 + ROW_BITS)))
    sel = tuple(i for i, b in enumerate(bits) if b < 3 or 6 <= b < 3 + len(rows))
    if sel:
        R = 1 << len(rows)
        local = np.array([R << bits[i] if bits[i] < 3 else 1 << (bits[i] - 3) for i in sel], dtype=np.int64)
        out.append((sel, local, _bit_combinations(list(range(3 + len(rows), n))), _bit_combinations(rows), 8, True))
    # the rest (bits 3-5 and the high bits): row-major planes of 8 columns, the gated bits among the rows
    # (a layer may hold several gates on one wire: they stay in one pass, in order)
    rest = sorted({b for i, b in enumerate(bits) if i not in sel})
    while rest:
        gated, rest = rest[:ROW_BITS], rest[ROW_BITS:]
        group = [i for i, b in enumerate(bits) if b in gated]
        fill = [b for b in range(3, n) if b not in gated][:max(0, min(ROW_BITS, n - 3) - len(gated))]
        rows = sorted(gated + fill)
        local = np.array([8 << rows.index(bits[i]) for i in group], dtype=np.int64)
        others = [b for b in range(3, n) if b not in rows]
        out.append((tuple(group), local, _bit_combinations(others), _bit_combinations(rows), 8, False))
    return tuple(out)


def layer_passes(n: int, strides) -> tuple:
    """How the planar kernels (:mod:`qhybrid.sim.fastplanar`) run 1-qubit gates on distinct
    wires (``strides``): a tuple of passes ``(sel, local, starts, offs, W, colmajor)``, each over
    every chunk ``starts[c] + offs[h] + j`` (``j < W``) for the gates ``sel``, ``local`` their
    pairs' distance in the planes. A gate vectorizes when its pairs are at least 8 apart in
    the planes, so no pass may act on the planes' three lowest bits: pass one takes bits 0-2
    as columns but lays the planes out column-major (those bits then lie highest) and runs the
    gates on bits 0-2 and 6-12; the gates on bits 3-5 and on the high bits run in row-major
    passes of 8 columns whose rows are their bits (plus filler bits up to ``ROW_BITS`` rows)."""
    return _passes(int(n), tuple(int(s).bit_length() - 1 for s in strides))


#: "No permutation" for the planar kernels' ``tables`` argument.
NO_TABLES = np.zeros((0, 1024), dtype=np.int64)


def apply_layer(state: torch.Tensor, kop: KOp, n: int, *, fast: bool = True, perm: KOp | None = None,
                src: torch.Tensor | None = None) -> None:
    """A run of 1-qubit gates, on the fast path in the planar passes of :func:`layer_passes`
    (each pass takes its own wires; gates on different wires commute). With ``perm``
    (fast path only) the layer runs on ``perm`` applied to ``src`` (another buffer), read
    through on the way in, and the result lands in ``state``: a CNOT ladder and the layer
    after it in the passes of the layer alone."""
    N = state.shape[1]
    strides = np.array([1 << (n - 1 - w) for w in kop.wires], dtype=np.int64)
    if use_fast(state, fast):
        mats = _np(kop.data)
        source, tables = (state, NO_TABLES) if perm is None else (src, perm.data[0])
        for sel, local, starts, offs, W, colmajor in layer_passes(n, strides):
            _fk.kernel("apply_layer_planar", N)(state.numpy(), source.numpy(), tables,
                                                np.ascontiguousarray(mats[list(sel)]), local, starts, offs, W,
                                                colmajor, _fk.slots(N))
            source, tables = state, NO_TABLES  # the next pass runs on what this one wrote
        return
    if perm is not None:
        state.copy_(src)
        apply_kop(state, perm, n, fast=fast)
    for r, w in enumerate(kop.wires):
        m = kop.data[r] if kop.data.shape[1] > 1 else kop.data[r, 0]
        state.copy_(kernels.apply_matrix(state, m, [w], n))


def generator_overlap(bra: torch.Tensor, ket: torch.Tensor, gen: np.ndarray, wires, n: int,
                      *, fast: bool = True) -> torch.Tensor:
    """``<bra| G |ket>`` per batch row, for a generator ``G`` on ``wires``.

    ``gen`` is ``(d,)`` for a diagonal generator, else ``(d, d)``. Returns (B,) complex.
    """
    k = len(wires)
    g = torch.as_tensor(gen, dtype=ket.dtype, device=ket.device)
    if k == 0:
        return g.reshape(-1)[0] * torch.sum(bra.conj() * ket, dim=1)
    if use_fast(ket, fast):
        b, kt = bra.numpy(), ket.numpy()
        if g.ndim == 1:
            shifts = np.array([n - 1 - w for w in wires], dtype=np.int64)
            return torch.from_numpy(_fk.kernel("grad_diag", kt.shape[1])(b, kt, g.numpy().astype(np.complex128), shifts))
        if k == 1:
            return torch.from_numpy(_fk.kernel("grad_1q", kt.shape[1])(b, kt, g.numpy().astype(np.complex128), 1 << (n - 1 - wires[0])))
    if g.ndim == 1:
        gk = kernels.apply_diagonal(ket, g, list(wires), n)
    else:
        gk = kernels.apply_matrix(ket, g, list(wires), n)
    return torch.sum(bra.conj() * gk, dim=1).to(torch.complex128)
