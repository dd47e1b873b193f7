"""Kernel dispatch: apply dense blocks, diagonals and phase tables in place.

A :class:`KOp` is a gate ready to run: a ``(P, d, d)`` dense block or a
``(P, d)`` diagonal on ``wires``, a phase lookup (``table[P, m]`` indexed by
a cached ``index[2**n]``), or a run of CNOTs / SWAPs as one index permutation
(``perm``: one gather pass through a scratch buffer). ``apply_kop(state, kop, n)`` updates ``state``
(``(B, 2**n)``) in place. On CPU with ``fast=True`` the numba kernels of
:mod:`qhybrid.sim.fastkernels` run (one pass per gate); otherwise the torch
reference path (``kernels.apply_matrix`` and broadcast multiplies), which is
the same code on CUDA. Kernels trust their inputs.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import torch

from . import kernels

try:  # numba is optional (the "fast" extra)
    from . import fastkernels as _fk
except Exception:  # pragma: no cover
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
    """Whether the numba kernels apply to this state."""
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


def apply_kop(state: torch.Tensor, kop: KOp, n: int, *, fast: bool = True, cache=None) -> torch.Tensor:
    """Apply ``kop`` to ``state`` (B, 2**n) in place and return it (``cache`` holds scratch)."""
    k = len(kop.wires)
    if kop.kind == "perm":
        if use_fast(state, fast):
            st = state.numpy()
            _fk.kernel("permute_gather", st.shape[1])(st, scratch_buffer(st.shape[1], st.dtype, cache), kop.data[0])
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


#: Cache block (amplitudes) for the blocked 1-qubit layer kernels.
BLOCK = 1 << 13
#: Columns per block for the high-wire pass (rows of ``BLOCK`` amplitudes, ``COLUMNS`` wide).
COLUMNS = 32


def block_size(N: int) -> int:
    return min(N, BLOCK)


def chunk_geometry(N: int, strides: np.ndarray, high: bool) -> tuple:
    """(local strides, nchunk, cstep, nrows, rowstep, W) of the planar layer kernels (see
    :mod:`qhybrid.sim.fastplanar`) for 1-qubit gates at ``strides``: low wires (strides below
    the block) in contiguous blocks; high wires in blocks of ``COLUMNS`` columns of every
    block-row, where a high stride ``s`` is ``(s / block) * COLUMNS`` apart."""
    blk = block_size(N)
    if not high:
        return strides, N // blk, blk, 1, blk, blk
    W = min(COLUMNS, blk)
    return (strides // blk) * W, blk // W, W, N // blk, blk, W


#: "No permutation" for the planar kernels' ``tables`` argument.
NO_TABLES = np.zeros((0, 1024), dtype=np.int64)


def apply_layer(state: torch.Tensor, kop: KOp, n: int, *, fast: bool = True, perm: KOp | None = None,
                src: torch.Tensor | None = None) -> None:
    """A run of 1-qubit gates in two passes: low wires in contiguous cache blocks, high wires
    in column blocks (the two groups act on different wires, so they commute). With ``perm``
    (fast path only) the layer runs on ``perm`` applied to ``src`` (another buffer), read
    through on the way in, and the result lands in ``state``: a CNOT ladder and the layer
    after it in the passes of the layer alone."""
    N = state.shape[1]
    strides = np.array([1 << (n - 1 - w) for w in kop.wires], dtype=np.int64)
    if use_fast(state, fast):
        blk = block_size(N)
        mats = _np(kop.data)
        source, tables = (state, NO_TABLES) if perm is None else (src, perm.data[0])
        for sel, high in ((np.nonzero(strides < blk)[0], False), (np.nonzero(strides >= blk)[0], True)):
            if len(sel):
                _fk.kernel("apply_layer_planar", N)(state.numpy(), source.numpy(), tables,
                                                    np.ascontiguousarray(mats[sel]),
                                                    *chunk_geometry(N, strides[sel], high), _fk.slots(N))
                source, tables = state, NO_TABLES  # the second pass runs on what the first wrote
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
