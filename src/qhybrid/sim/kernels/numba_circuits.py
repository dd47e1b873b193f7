"""The numba set's general-circuit kernels on torch CPU states (numpy views, shared memory).

Loaded by :class:`~qhybrid.sim.kernels.numba_set.NumbaKernels` on first use (it imports torch;
the QAOA path does not need it). Each function calls the registered kernels of
:mod:`qhybrid.sim.fastkernels`, :mod:`.fastplanar`, :mod:`.fastgrad`, :mod:`.fastobs`
(``registry.kernel(name, size)``: serial or threaded by the state's size); gates the numba
kernels do not cover (dense on 3+ wires) use the torch reference.
"""
from __future__ import annotations

import numpy as np
import torch

from qhybrid.sim.fastobs import sort_pauli_terms
from qhybrid.sim.registry import kernel, slots

from . import torch_ops
from .planar_layout import NO_TABLES, layer_passes

#: Output chunk (amplitudes) of the many-word Pauli kernel: it and its sources stay in L1/L2.
PAULI_CHUNK = 128


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


def permute_into(out, state, step) -> None:
    """``out`` (another buffer) <- ``step`` applied to ``state``, in one gather pass."""
    N = state.shape[1]
    kernel("permute_into", N)(out.numpy(), state.numpy(), step.gather, slots(N))


def apply_permutation(state, step, n, cache) -> None:
    """Through one row of scratch per batch row, then copied back."""
    st = state.numpy()
    N = st.shape[1]
    scratch = scratch_buffer(N, st.dtype, cache)[None]
    for b in range(st.shape[0]):
        kernel("permute_into", N)(scratch, st[b:b + 1], step.gather, slots(N))
        state[b].copy_(torch.from_numpy(scratch[0]))


def phase_lookup(state, table, index) -> None:
    kernel("phase_lookup", state.shape[1])(state.numpy(), _np(table), index.numpy())


def apply_swap(state, wires, ctrl, n) -> None:
    # serial on purpose: a pure copy gains nothing from threads, and measured slower with them
    kernel("swap_pairs", 0)(state.numpy(), 1 << (n - 1 - wires[0]), 1 << (n - 1 - wires[1]), ctrl)


def apply_diagonal(state, diagonal, wires, n) -> None:
    shifts = np.array([n - 1 - w for w in wires], dtype=np.int64)
    kernel("apply_diag", state.shape[1])(state.numpy(), _np(diagonal), shifts)


def apply_dense(state, matrix, wires, n) -> None:
    k = len(wires)
    if k <= 2:
        s = [1 << (n - 1 - w) for w in wires]
        kernel("apply_1q" if k == 1 else "apply_2q", state.shape[1])(state.numpy(), _np(matrix), *s)
        return
    m = matrix if matrix.shape[0] > 1 else matrix[0]
    state.copy_(torch_ops.apply_matrix(state, m, list(wires), n))


def apply_layer(state, step, n, perm=None, src=None, after=None, spare=None):
    """The planar passes of :func:`layer_passes` (see :meth:`KernelSet.apply_layer`); returns
    the buffer that holds the result."""
    N = state.shape[1]
    strides = np.array([1 << (n - 1 - w) for w in step.wires], dtype=np.int64)
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
        kernel("apply_layer_planar", N)(dst.numpy(), cur.numpy(), tables, out_tables,
                                        np.ascontiguousarray(mats[list(sel)]), local, starts, offs, W,
                                        colmajor, slots(N))
        if dst is other:
            cur, other = other, cur
        tables = NO_TABLES  # the next pass runs on what this one wrote
    if late:
        permute_into(other, cur, after)
        cur = other
    return cur


def weighted_norm(state, weights):
    return torch.from_numpy(kernel("weighted_norm", state.shape[1])(state.numpy(), weights.numpy()))


def pauli_expval(state, x, z):
    return torch.from_numpy(kernel("pauli_expval", state.shape[1])(state.numpy(), x, z))


def diag_mul_into(out, state, weights) -> None:
    kernel("diag_mul_into", state.shape[1])(out.numpy(), state.numpy(), weights.numpy())


def pauli_sum_into(out, state, terms) -> None:
    """A complex coefficient as a real and an imaginary term (see the kernel), the words sorted
    into groups per output chunk."""
    if not terms:
        return
    parts = [(v, k, x, z) for c, x, z in terms for k, v in enumerate((c.real, c.imag)) if v != 0]
    if not parts:
        return
    cf = np.array([p[0] for p in parts], dtype=state.numpy().real.dtype)
    im = np.array([p[1] for p in parts], dtype=np.int64)
    xs = np.array([p[2] for p in parts], dtype=np.int64)
    zs = np.array([p[3] for p in parts], dtype=np.int64)
    L = min(state.shape[1], PAULI_CHUNK)
    order, gstart, gimag = sort_pauli_terms(xs, im, L)
    kernel("pauli_sum_accumulate", state.shape[1])(
        out.numpy(), state.numpy(), np.ascontiguousarray(cf[order]), np.ascontiguousarray(xs[order]),
        np.ascontiguousarray(zs[order]), gstart, gimag, L)


def vdot_real(ket, bra):
    return torch.from_numpy(kernel("vdot_real", ket.shape[1])(ket.numpy(), bra.numpy()))


def generator_overlap(bra, ket, gen, wires, n):
    """``<bra|G|ket>``: the numba kernels for a diagonal generator and a 1-qubit one, else None."""
    k = len(wires)
    b, kt = bra.numpy(), ket.numpy()
    g = np.asarray(gen).astype(np.complex128)
    if g.ndim == 1 and k:
        shifts = np.array([n - 1 - w for w in wires], dtype=np.int64)
        return torch.from_numpy(kernel("grad_diag", kt.shape[1])(b, kt, g, shifts))
    if g.ndim == 2 and k == 1:
        return torch.from_numpy(kernel("grad_1q", kt.shape[1])(b, kt, g, 1 << (n - 1 - wires[0])))
    return None
