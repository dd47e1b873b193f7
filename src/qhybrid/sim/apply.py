"""``apply``: the one dispatch that runs a step (:mod:`qhybrid.sim.steps`) on a state, in place.

``apply(state, step, n)`` updates ``state`` (``(B, 2**n)``) and returns it. On CPU with
``fast=True`` the numba kernels run (:mod:`.fastkernels`, :mod:`.fastplanar`: one pass per
step); otherwise the torch reference path (``kernels.apply_matrix`` and broadcast multiplies),
which is the same code on CUDA. A :class:`~qhybrid.sim.steps.Permutation` gathers through a
scratch buffer and copies back, or, with :func:`permute_into`, into a spare buffer that then
holds the state; :func:`apply_layer` can read a layer's input through a permutation and write
its output through another (the CNOT ladders before and after it in the passes of the layer
alone). Kernels trust their inputs.
"""
from __future__ import annotations

import functools

import numpy as np
import torch

from . import kernels
from .jit import notice
from .steps import Dense, Diagonal, Layer, Permutation, PhaseLookup, Swap

try:  # numba is a dependency, but a platform without its wheels runs the torch kernels
    from . import fastkernels as numba_kernels
except ImportError:  # pragma: no cover
    numba_kernels = None


def use_fast(state: torch.Tensor, fast: bool) -> bool:
    """Whether the numba kernels apply to this state (a one-line notice when numba is missing)."""
    if fast and numba_kernels is None and state.device.type == "cpu":
        notice()
    return fast and numba_kernels is not None and state.device.type == "cpu"


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().resolve_conj().contiguous().numpy()


def _kernel(name: str, size: int):
    return numba_kernels.kernel(name, size)


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


def permute_into(out: torch.Tensor, state: torch.Tensor, step: Permutation) -> torch.Tensor:
    """``out`` (another buffer) <- ``step`` applied to ``state``, in one gather pass (fast path):
    the caller's spare buffer then holds the state, no copy back."""
    N = state.shape[1]
    _kernel("permute_into", N)(out.numpy(), state.numpy(), step.gather, numba_kernels.slots(N))
    return out


def _apply_permutation(state, step: Permutation, n, fast, cache):
    if not use_fast(state, fast):
        for swap in step.swaps:
            _apply_swap(state, swap, n, fast, cache)
        return
    st = state.numpy()
    N = st.shape[1]
    scratch = scratch_buffer(N, st.dtype, cache)[None]
    for b in range(st.shape[0]):  # through one row of scratch, then back
        _kernel("permute_into", N)(scratch, st[b:b + 1], step.gather, numba_kernels.slots(N))
        state[b].copy_(torch.from_numpy(scratch[0]))


def _apply_lookup(state, step: PhaseLookup, n, fast, cache):
    if use_fast(state, fast):
        _kernel("phase_lookup", state.shape[1])(state.numpy(), _np(step.table), step.index.numpy())
    else:
        state.mul_(step.table[:, step.index.long()])


def _apply_swap(state, step: Swap, n, fast, cache):
    if use_fast(state, fast):
        # serial on purpose: a pure copy gains nothing from threads, and measured slower with them
        _kernel("swap_pairs", 0)(state.numpy(), 1 << (n - 1 - step.wires[0]), 1 << (n - 1 - step.wires[1]),
                                 step.ctrl)
    else:
        state.copy_(kernels.apply_matrix(state, step.matrix[0], list(step.wires), n))


def _apply_diagonal(state, step: Diagonal, n, fast, cache):
    k = len(step.wires)
    d = step.diagonal
    if k == 0:
        state.mul_(d[:, :1])
    elif k == n and list(step.wires) == list(range(n)):
        state.mul_(d)
    elif use_fast(state, fast):
        shifts = np.array([n - 1 - w for w in step.wires], dtype=np.int64)
        _kernel("apply_diag", state.shape[1])(state.numpy(), _np(d), shifts)
    else:
        state.copy_(kernels.apply_diagonal(state, d, list(step.wires), n))


def _apply_dense(state, step: Dense, n, fast, cache):
    k = len(step.wires)
    if use_fast(state, fast) and k <= 2:
        s = [1 << (n - 1 - w) for w in step.wires]
        _kernel("apply_1q" if k == 1 else "apply_2q", state.shape[1])(state.numpy(), _np(step.matrix), *s)
        return
    m = step.matrix if step.matrix.shape[0] > 1 else step.matrix[0]
    state.copy_(kernels.apply_matrix(state, m, list(step.wires), n))


def _apply_layer(state, step: Layer, n, fast, cache):
    apply_layer(state, step, n, fast=fast)


_DISPATCH = {Dense: _apply_dense, Diagonal: _apply_diagonal, Layer: _apply_layer, Swap: _apply_swap,
             Permutation: _apply_permutation, PhaseLookup: _apply_lookup}


def apply(state: torch.Tensor, step, n: int, *, fast: bool = True, cache=None) -> torch.Tensor:
    """Apply ``step`` to ``state`` (B, 2**n) in place and return it (``cache`` holds scratch).

    Example::

        from qhybrid.sim.steps import Dense
        apply(state, Dense((0,), hadamard[None]), n)
    """
    _DISPATCH[type(step)](state, step, n, fast, cache)
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
        out.append((tuple(group), local, _bit_combinations(others), *_segments(rows), False))
    return tuple(out)


def _segments(rows: list) -> tuple:
    """``(offs, W)`` of a row-major pass whose rows of 8 amplitudes are over the bits ``rows``:
    rows whose lowest bits are 3, 4, ... lie side by side in the state, so they are copied as
    one run of ``W`` (at most 1024: a run stays inside one block of the ladder tables' low
    digit). The planes' layout is the same either way, only the copy loops get longer."""
    k = 0
    while k < len(rows) and rows[k] == 3 + k and k < 7:
        k += 1
    return _bit_combinations(rows[k:]), 8 << k


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


def apply_layer(state: torch.Tensor, step: Layer, n: int, *, fast: bool = True, perm: Permutation | None = None,
                src: torch.Tensor | None = None, after: Permutation | None = None,
                spare: torch.Tensor | None = None) -> torch.Tensor:
    """A run of 1-qubit gates, on the fast path in the planar passes of :func:`layer_passes`
    (each pass takes its own wires; gates on different wires commute); returns the buffer that
    holds the result. With ``perm`` (fast path only) the layer runs on ``perm`` applied to ``src``
    (another buffer), read through on the way in, and the result lands in ``state``: a CNOT
    ladder and the layer after it in the passes of the layer alone. With ``after`` (fast path
    only) the ladder after the layer is applied too, its last pass (a row-major one; else one
    gather pass after it) writing through the ladder's map into the other buffer (``src``, or
    ``spare`` without ``perm``): the result then lies in ``state`` or in that buffer (the one
    returned; the other is left as scratch)."""
    N = state.shape[1]
    strides = np.array([1 << (n - 1 - w) for w in step.wires], dtype=np.int64)
    if use_fast(state, fast):
        mats = _np(step.matrices)
        # cur holds the data a pass reads, other the buffer an out-of-place pass writes
        cur, other = (state, spare) if perm is None else (src, state)
        tables = NO_TABLES if perm is None else perm.gather
        passes = layer_passes(n, strides)
        if perm is not None and passes[0][5] and len(passes) > (2 if after is not None else 1):
            # the passes commute: a row-major one reads through the ladder (cheaper than a column-major
            # one), unless the only other pass must write through the ladder after
            passes = (passes[1], passes[0]) + passes[2:]
        late = after is not None and passes[-1][5]  # a column-major last pass: the ladder after runs apart
        for i, (sel, local, starts, offs, W, colmajor) in enumerate(passes):
            out_tables = after.tables[1] if after is not None and not late and i == len(passes) - 1 else NO_TABLES
            dst = other if tables.shape[0] or out_tables.shape[0] else cur
            _kernel("apply_layer_planar", N)(dst.numpy(), cur.numpy(), tables, out_tables,
                                             np.ascontiguousarray(mats[list(sel)]), local, starts, offs, W,
                                             colmajor, numba_kernels.slots(N))
            if dst is other:
                cur, other = other, cur
            tables = NO_TABLES  # the next pass runs on what this one wrote
        if late:
            permute_into(other, cur, after)
            cur = other
        return cur
    if perm is not None:
        state.copy_(src)
        apply(state, perm, n, fast=fast)
    for r, w in enumerate(step.wires):
        m = step.matrices[r] if step.matrices.shape[1] > 1 else step.matrices[r, 0]
        state.copy_(kernels.apply_matrix(state, m, [w], n))
    if after is not None:
        apply(state, after, n, fast=fast)
    return state


def generator_overlap(bra: torch.Tensor, ket: torch.Tensor, gen: np.ndarray, wires, n: int,
                      *, fast: bool = True) -> torch.Tensor:
    """``<bra| G |ket>`` per batch row, for a generator ``G`` on ``wires``.

    ``gen`` is ``(d,)`` for a diagonal generator, else ``(d, d)``. Returns (B,) complex.
    """
    k = len(wires)
    g = torch.tensor(gen, dtype=ket.dtype, device=ket.device)  # a copy: cached generators are read-only
    if k == 0:
        return g.reshape(-1)[0] * torch.sum(bra.conj() * ket, dim=1)
    if use_fast(ket, fast):
        b, kt = bra.numpy(), ket.numpy()
        if g.ndim == 1:
            shifts = np.array([n - 1 - w for w in wires], dtype=np.int64)
            return torch.from_numpy(_kernel("grad_diag", kt.shape[1])(b, kt, g.numpy().astype(np.complex128), shifts))
        if k == 1:
            return torch.from_numpy(_kernel("grad_1q", kt.shape[1])(b, kt, g.numpy().astype(np.complex128),
                                                                    1 << (n - 1 - wires[0])))
    if g.ndim == 1:
        gk = kernels.apply_diagonal(ket, g, list(wires), n)
    else:
        gk = kernels.apply_matrix(ket, g, list(wires), n)
    return torch.sum(bra.conj() * gk, dim=1).to(torch.complex128)
