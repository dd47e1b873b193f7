"""numba kernels for the adjoint sweep (derivative overlaps fused with the undo), in place where they update a state.

They trust their inputs (see :mod:`qhybrid.sim.fastkernels`); compiled serial and
threaded through :func:`qhybrid.sim.registry.kernel`.
"""
from __future__ import annotations

import numpy as np

from .bitops import parity, sign_table  # noqa: F401
from .jit import njit, prange  # noqa: F401  (prange: threaded loops once registered)
from .registry import register


@njit(inline="always")
def _pair_general(br, kr, i0, i1, m00, m01, m10, m11, g00, g01, g10, g11, upd):
    """``conj(bra) G ket`` on the pair (i0, i1), returned; then ``inv`` applied to the bra pair
    (``upd`` 0 and 1) and to the ket pair (``upd`` 1); ``upd`` 2 writes nothing."""
    a = kr[i0]
    c = kr[i1]
    x = br[i0]
    y = br[i1]
    v = np.conj(x) * (g00 * a + g01 * c) + np.conj(y) * (g10 * a + g11 * c)
    if upd != 2:
        br[i0] = m00 * x + m01 * y
        br[i1] = m10 * x + m11 * y
    if upd == 1:
        kr[i0] = m00 * a + m01 * c
        kr[i1] = m10 * a + m11 * c
    return v


@register
def grad_1q(bra, ket, g, s):
    """``sum_c conj(bra[b, c]) (G ket)[b, c]`` for a 2x2 ``G`` on stride ``s``, per row."""
    B, N = ket.shape
    out = np.zeros(B, dtype=np.complex128)
    g00, g01, g10, g11 = g[0, 0], g[0, 1], g[1, 0], g[1, 1]
    for b in range(B):
        br = bra[b]
        kr = ket[b]
        acc_r = 0.0
        acc_i = 0.0
        for i in prange(N // 2):
            i0 = ((i & ~(s - 1)) << 1) | (i & (s - 1))
            v = _pair_general(br, kr, i0, i0 | s, 0j, 0j, 0j, 0j, g00, g01, g10, g11, 2)
            acc_r += v.real
            acc_i += v.imag
        out[b] = acc_r + 1j * acc_i
    return out


@register
def grad_diag(bra, ket, gdiag, shifts):
    """``sum_c conj(bra) g[j(c)] ket`` for a diagonal generator on the wires at ``shifts``."""
    B, N = ket.shape
    k = shifts.shape[0]
    out = np.zeros(B, dtype=np.complex128)
    for b in range(B):
        br = bra[b]
        kr = ket[b]
        acc_r = 0.0
        acc_i = 0.0
        for i in prange(N):
            j = 0
            for t in range(k):
                j = (j << 1) | ((i >> shifts[t]) & 1)
            v = np.conj(br[i]) * kr[i] * gdiag[j]
            acc_r += v.real
            acc_i += v.imag
        out[b] = acc_r + 1j * acc_i
    return out


@register
def zrot_grads(bra, ket, masks):
    """``out[b, g] = sum_c Im(conj(bra) ket)[b, c] * (-1)^parity(c & masks[g])`` in one pass.

    ``c = hi | lo`` with ``lo`` the low 10 bits: per 1024-chunk, ``v = Im(conj(bra) ket)``
    is formed once and each gate adds ``sign_hi * dot(sign_lo_table_g, v)``."""
    B, N = ket.shape
    G = masks.shape[0]
    L = min(N, 1024)
    signs = np.empty((G, L))
    for g in range(G):
        signs[g] = sign_table(L, masks[g] & (L - 1))
    nchunk = N // L
    out = np.zeros((B, G))
    for b in range(B):
        br = bra[b]
        kr = ket[b]
        part = np.zeros((nchunk, G))
        for ch in prange(nchunk):
            hi = ch * L
            v = np.empty(L)
            for lo in range(L):
                x = br[hi + lo]
                y = kr[hi + lo]
                v[lo] = x.real * y.imag - x.imag * y.real
            for g in range(G):
                st = signs[g]
                acc = 0.0
                for lo in range(L):
                    acc += st[lo] * v[lo]
                part[ch, g] = -acc if parity(hi & masks[g]) else acc
        for ch in range(nchunk):
            for g in range(G):
                out[b, g] += part[ch, g]
    return out


@register
def adjoint_1q(bra, ket, inv, g, s, update_ket):
    """One backward step on a 1-qubit gate: return ``<bra|G|ket>`` per row, then apply
    ``inv`` to ``bra`` (and to ``ket`` when ``update_ket``), all in one pass."""
    B, N = ket.shape
    out = np.zeros(B, dtype=np.complex128)
    g00, g01, g10, g11 = g[0, 0], g[0, 1], g[1, 0], g[1, 1]
    upd = 1 if update_ket else 0
    for b in range(B):
        m = inv[b if inv.shape[0] > 1 else 0]
        m00, m01, m10, m11 = m[0, 0], m[0, 1], m[1, 0], m[1, 1]
        br = bra[b]
        kr = ket[b]
        acc_r = 0.0
        acc_i = 0.0
        for i in prange(N // 2):
            i0 = ((i & ~(s - 1)) << 1) | (i & (s - 1))
            v = _pair_general(br, kr, i0, i0 | s, m00, m01, m10, m11, g00, g01, g10, g11, upd)
            acc_r += v.real
            acc_i += v.imag
        out[b] = acc_r + 1j * acc_i
    return out


@register
def adjoint_2q(bra, ket, inv, g, s0, s1, update_ket):
    """:func:`adjoint_1q` for a two-qubit gate (strides ``s0`` = matrix MSB, ``s1``)."""
    B, N = ket.shape
    lo = min(s0, s1)
    hi = max(s0, s1)
    out = np.zeros(B, dtype=np.complex128)
    g00 = g[0, 0]; g01 = g[0, 1]; g02 = g[0, 2]; g03 = g[0, 3]; g10 = g[1, 0]; g11 = g[1, 1]; g12 = g[1, 2]; g13 = g[1, 3]; g20 = g[2, 0]; g21 = g[2, 1]; g22 = g[2, 2]; g23 = g[2, 3]; g30 = g[3, 0]; g31 = g[3, 1]; g32 = g[3, 2]; g33 = g[3, 3]
    for b in range(B):
        m = inv[b if inv.shape[0] > 1 else 0]
        m00 = m[0, 0]; m01 = m[0, 1]; m02 = m[0, 2]; m03 = m[0, 3]; m10 = m[1, 0]; m11 = m[1, 1]; m12 = m[1, 2]; m13 = m[1, 3]; m20 = m[2, 0]; m21 = m[2, 1]; m22 = m[2, 2]; m23 = m[2, 3]; m30 = m[3, 0]; m31 = m[3, 1]; m32 = m[3, 2]; m33 = m[3, 3]
        br = bra[b]
        kr = ket[b]
        acc_r = 0.0
        acc_i = 0.0
        for i in prange(N // 4):
            x = ((i & ~(lo - 1)) << 1) | (i & (lo - 1))
            x = ((x & ~(hi - 1)) << 1) | (x & (hi - 1))
            j0 = x
            j1 = x | s1
            j2 = x | s0
            j3 = x | s0 | s1
            k0 = kr[j0]
            k1 = kr[j1]
            k2 = kr[j2]
            k3 = kr[j3]
            b0 = br[j0]
            b1 = br[j1]
            b2 = br[j2]
            b3 = br[j3]
            v = (np.conj(b0) * (g00 * k0 + g01 * k1 + g02 * k2 + g03 * k3)
                 + np.conj(b1) * (g10 * k0 + g11 * k1 + g12 * k2 + g13 * k3)
                 + np.conj(b2) * (g20 * k0 + g21 * k1 + g22 * k2 + g23 * k3)
                 + np.conj(b3) * (g30 * k0 + g31 * k1 + g32 * k2 + g33 * k3))
            acc_r += v.real
            acc_i += v.imag
            br[j0] = m00 * b0 + m01 * b1 + m02 * b2 + m03 * b3
            br[j1] = m10 * b0 + m11 * b1 + m12 * b2 + m13 * b3
            br[j2] = m20 * b0 + m21 * b1 + m22 * b2 + m23 * b3
            br[j3] = m30 * b0 + m31 * b1 + m32 * b2 + m33 * b3
            if update_ket:
                kr[j0] = m00 * k0 + m01 * k1 + m02 * k2 + m03 * k3
                kr[j1] = m10 * k0 + m11 * k1 + m12 * k2 + m13 * k3
                kr[j2] = m20 * k0 + m21 * k1 + m22 * k2 + m23 * k3
                kr[j3] = m30 * k0 + m31 * k1 + m32 * k2 + m33 * k3
        out[b] = acc_r + 1j * acc_i
    return out


@register
def vdot_real(a, b):
    """``Re sum_c conj(a[r, c]) b[r, c]`` per row."""
    B, N = a.shape
    out = np.zeros(B)
    for r in range(B):
        ar = a[r]
        br = b[r]
        acc = 0.0
        for c in prange(N):
            x = ar[c]
            y = br[c]
            acc += x.real * y.real + x.imag * y.imag
        out[r] = acc
    return out
