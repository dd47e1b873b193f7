"""numba kernels for CPU states (gate application). ``kernel(name, size)`` (from
:mod:`.registry`, re-exported here) is the one entry point to every registered kernel
(these, :mod:`.fastgrad`, :mod:`.fastobs` and :mod:`.fastplanar`).

They trust their inputs: ``state`` is a C-contiguous ``(B, 2**n)`` complex
numpy view of the torch state (shared memory), matrices have a leading batch
axis of 1 or B, strides are powers of two (``stride = 2**(n-1-wire)``).
:mod:`qhybrid.sim.apply` chooses between these and the torch reference.
"""
from __future__ import annotations

from .bitops import parity
import numpy as np

from .jit import claim, prange
from .registry import PARALLEL_MIN, kernel, register, slots  # noqa: F401  (kernel, slots: the entry points)


@register
def apply_1q(state, mats, s):
    """2x2 ``mats[b]`` on the wire whose stride is ``s``."""
    B, N = state.shape
    half = N // 2
    for b in range(B):
        m = mats[b if mats.shape[0] > 1 else 0]
        m00, m01, m10, m11 = m[0, 0], m[0, 1], m[1, 0], m[1, 1]
        row = state[b]
        for i in prange(half):
            i0 = ((i & ~(s - 1)) << 1) | (i & (s - 1))
            i1 = i0 | s
            a = row[i0]
            c = row[i1]
            row[i0] = m00 * a + m01 * c
            row[i1] = m10 * a + m11 * c


@register
def apply_2q(state, mats, s0, s1):
    """4x4 ``mats[b]`` on two wires with strides ``s0`` (matrix MSB) and ``s1``."""
    B, N = state.shape
    lo = min(s0, s1)
    hi = max(s0, s1)
    for b in range(B):
        m = mats[b if mats.shape[0] > 1 else 0]
        m00 = m[0, 0]; m01 = m[0, 1]; m02 = m[0, 2]; m03 = m[0, 3]; m10 = m[1, 0]; m11 = m[1, 1]; m12 = m[1, 2]; m13 = m[1, 3]; m20 = m[2, 0]; m21 = m[2, 1]; m22 = m[2, 2]; m23 = m[2, 3]; m30 = m[3, 0]; m31 = m[3, 1]; m32 = m[3, 2]; m33 = m[3, 3]
        row = state[b]
        for i in prange(N // 4):
            x = ((i & ~(lo - 1)) << 1) | (i & (lo - 1))
            x = ((x & ~(hi - 1)) << 1) | (x & (hi - 1))
            j0 = x
            j1 = x | s1
            j2 = x | s0
            j3 = x | s0 | s1
            v0 = row[j0]
            v1 = row[j1]
            v2 = row[j2]
            v3 = row[j3]
            row[j0] = m00 * v0 + m01 * v1 + m02 * v2 + m03 * v3
            row[j1] = m10 * v0 + m11 * v1 + m12 * v2 + m13 * v3
            row[j2] = m20 * v0 + m21 * v1 + m22 * v2 + m23 * v3
            row[j3] = m30 * v0 + m31 * v1 + m32 * v2 + m33 * v3


@register
def apply_diag(state, diag, shifts):
    """Multiply by ``diag[b, j]``, ``j`` the bits of the index at ``shifts`` (MSB first)."""
    B, N = state.shape
    k = shifts.shape[0]
    for b in range(B):
        d = diag[b if diag.shape[0] > 1 else 0]
        row = state[b]
        for i in prange(N):
            j = 0
            for t in range(k):
                j = (j << 1) | ((i >> shifts[t]) & 1)
            row[i] *= d[j]


@register
def phase_lookup(state, table, index):
    """``state[b, i] *= table[b, index[i]]`` (a fused phase pass from a small table)."""
    B, N = state.shape
    for b in range(B):
        t = table[b if table.shape[0] > 1 else 0]
        row = state[b]
        for i in prange(N):
            row[i] *= t[index[i]]


@register
def parity_index(out, masks, group, strides):
    """``out[c] = sum_g strides[group[g]] * parity(c & masks[g])`` (a lookup index)."""
    N = out.shape[0]
    M = masks.shape[0]
    for c in prange(N):
        j = 0
        for g in range(M):
            j += strides[group[g]] * parity(c & masks[g])
        out[c] = j


@register
def swap_pairs(state, s0, s1, ctrl):
    """Permutation gates without arithmetic: swap amplitudes |..a..b..> between the two
    index sets of a CNOT (``ctrl``: control stride s0, target s1) or a SWAP (``ctrl`` false)."""
    B, N = state.shape
    lo = min(s0, s1)
    hi = max(s0, s1)
    for b in range(B):
        row = state[b]
        for i in prange(N // 4):
            x = ((i & ~(lo - 1)) << 1) | (i & (lo - 1))
            x = ((x & ~(hi - 1)) << 1) | (x & (hi - 1))
            if ctrl:
                p = x | s0
                q = x | s0 | s1
            else:
                p = x | s1
                q = x | s0
            t = row[p]
            row[p] = row[q]
            row[q] = t


@register
def permute_into(out, state, tables, workers):
    """``out[b, j] = state[b, h(j)]`` for a GF(2)-linear index map ``h`` (a run of CNOTs and SWAPs;
    ``out`` another buffer): ``h(j) = t[0][j & 1023] ^ t[1][(j >> 10) & 1023] ^ ...`` over the
    ten-bit digits of j, so a 1024-chunk reads one high part and the small table. ``workers``
    (:func:`~qhybrid.sim.registry.slots`) take groups of 16 chunks from a shared counter."""
    B, N = state.shape
    L = min(N, 1024)
    nchunk = N // L
    ngroup = (nchunk + 15) // 16
    t0 = tables[0]
    for b in range(B):
        row = state[b]
        orow = out[b]
        counter = np.zeros(1, dtype=np.int64)
        for _ in prange(max(1, min(workers, ngroup))):
            g = claim(counter)
            while g < ngroup:
                for h in range(16 * g, min(nchunk, 16 * g + 16)):
                    j = h * L
                    base = tables[1, (j >> 10) & 1023] ^ tables[2, (j >> 20) & 1023] ^ tables[3, (j >> 30) & 1023]
                    for lo in range(L):
                        orow[j + lo] = row[base ^ t0[lo]]
                g = claim(counter)
