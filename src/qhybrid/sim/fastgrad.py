"""numba kernels for the adjoint sweep (derivative overlaps fused with the undo), in place where they update a state.

They trust their inputs (see :mod:`qhybrid.sim.fastkernels`); compiled serial and
threaded through :func:`qhybrid.sim.fastkernels.kernel`.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange  # noqa: F401  (njit: helpers; prange: threaded loops)

from .fastkernels import _parity, _sign_table  # noqa: F401


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
            i1 = i0 | s
            a = kr[i0]
            c = kr[i1]
            v = np.conj(br[i0]) * (g00 * a + g01 * c) + np.conj(br[i1]) * (g10 * a + g11 * c)
            acc_r += v.real
            acc_i += v.imag
        out[b] = acc_r + 1j * acc_i
    return out


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


def zrot_grads(bra, ket, masks):
    """``out[b, g] = sum_c Im(conj(bra) ket)[b, c] * (-1)^parity(c & masks[g])`` in one pass.

    ``c = hi | lo`` with ``lo`` the low 10 bits: per 1024-chunk, ``v = Im(conj(bra) ket)``
    is formed once and each gate adds ``sign_hi * dot(sign_lo_table_g, v)``."""
    B, N = ket.shape
    G = masks.shape[0]
    L = min(N, 1024)
    signs = np.empty((G, L))
    for g in range(G):
        signs[g] = _sign_table(L, masks[g] & (L - 1))
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
                part[ch, g] = -acc if _parity(hi & masks[g]) else acc
        for ch in range(nchunk):
            for g in range(G):
                out[b, g] += part[ch, g]
    return out


def adjoint_1q(bra, ket, inv, g, s, update_ket):
    """One backward step on a 1-qubit gate: return ``<bra|G|ket>`` per row, then apply
    ``inv`` to ``bra`` (and to ``ket`` when ``update_ket``), all in one pass."""
    B, N = ket.shape
    out = np.zeros(B, dtype=np.complex128)
    g00, g01, g10, g11 = g[0, 0], g[0, 1], g[1, 0], g[1, 1]
    for b in range(B):
        m = inv[b if inv.shape[0] > 1 else 0]
        m00, m01, m10, m11 = m[0, 0], m[0, 1], m[1, 0], m[1, 1]
        br = bra[b]
        kr = ket[b]
        acc_r = 0.0
        acc_i = 0.0
        for i in prange(N // 2):
            i0 = ((i & ~(s - 1)) << 1) | (i & (s - 1))
            i1 = i0 | s
            a = kr[i0]
            c = kr[i1]
            x = br[i0]
            y = br[i1]
            v = np.conj(x) * (g00 * a + g01 * c) + np.conj(y) * (g10 * a + g11 * c)
            acc_r += v.real
            acc_i += v.imag
            br[i0] = m00 * x + m01 * y
            br[i1] = m10 * x + m11 * y
            if update_ket:
                kr[i0] = m00 * a + m01 * c
                kr[i1] = m10 * a + m11 * c
        out[b] = acc_r + 1j * acc_i
    return out


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


@njit(inline="always")
def _undo_pair(br, kr, i0, i1, x, y, a, c, m00, m01, m10, m11, upd):
    """Write ``inv`` applied to the bra pair (x, y) and, in mode 1, to the ket pair (a, c)
    (modes: see :func:`adjoint_1q_block`)."""
    if upd != 2:
        br[i0] = m00 * x + m01 * y
        br[i1] = m10 * x + m11 * y
    if upd == 1:
        kr[i0] = m00 * a + m01 * c
        kr[i1] = m10 * a + m11 * c


@njit(fastmath=True, cache=True)
def _pairs_adjoint(br, kr, base, s, half, m00, m01, m10, m11, g00, g01, g10, g11, upd):
    """Inside one block: sum conj(bra) G ket over the pairs of stride s, then bra <- inv bra."""
    acc_r = 0.0
    acc_i = 0.0
    for i in range(half):
        i0 = base + (((i & ~(s - 1)) << 1) | (i & (s - 1)))
        i1 = i0 | s
        a = kr[i0]
        c = kr[i1]
        x = br[i0]
        y = br[i1]
        v = np.conj(x) * (g00 * a + g01 * c) + np.conj(y) * (g10 * a + g11 * c)
        acc_r += v.real
        acc_i += v.imag
        _undo_pair(br, kr, i0, i1, x, y, a, c, m00, m01, m10, m11, upd)
    return acc_r, acc_i


@njit(fastmath=True, cache=True)
def _pairs_adjoint_cols(br, kr, p0, p1, W, m00, m01, m10, m11, g00, g01, g10, g11, upd):
    """Columns p0..p0+W paired with p1..p1+W: overlap partial sum, then bra <- inv bra."""
    acc_r = 0.0
    acc_i = 0.0
    for j in range(W):
        a = kr[p0 + j]
        c = kr[p1 + j]
        x = br[p0 + j]
        y = br[p1 + j]
        v = np.conj(x) * (g00 * a + g01 * c) + np.conj(y) * (g10 * a + g11 * c)
        acc_r += v.real
        acc_i += v.imag
        _undo_pair(br, kr, p0 + j, p1 + j, x, y, a, c, m00, m01, m10, m11, upd)
    return acc_r, acc_i


@njit(fastmath=True, cache=True)
def _pairs_adjoint_diag(br, kr, base, s, half, m00, m11, g00, g11, upd):
    """:func:`_pairs_adjoint` for a diagonal gate with a diagonal generator."""
    acc_r = 0.0
    acc_i = 0.0
    for i in range(half):
        i0 = base + (((i & ~(s - 1)) << 1) | (i & (s - 1)))
        i1 = i0 | s
        x = br[i0]
        y = br[i1]
        a = kr[i0]
        c = kr[i1]
        v = np.conj(x) * g00 * a + np.conj(y) * g11 * c
        acc_r += v.real
        acc_i += v.imag
        if upd != 2:
            br[i0] = m00 * x
            br[i1] = m11 * y
        if upd == 1:
            kr[i0] = m00 * a
            kr[i1] = m11 * c
    return acc_r, acc_i


@njit(fastmath=True, cache=True)
def _pairs_adjoint_rx(br, kr, base, s, half, c, sn, gx, upd):
    """:func:`_pairs_adjoint` for ``inv = [[c, i sn], [i sn, c]]`` and ``G = gx X`` (RX), in
    real arithmetic: about half the multiplications of the generic 2x2."""
    acc_i = 0.0
    acc_r = 0.0
    for i in range(half):
        i0 = base + (((i & ~(s - 1)) << 1) | (i & (s - 1)))
        i1 = i0 | s
        a = kr[i0]
        k1 = kr[i1]
        x = br[i0]
        y = br[i1]
        # conj(x) * k1 + conj(y) * a
        acc_r += x.real * k1.real + x.imag * k1.imag + y.real * a.real + y.imag * a.imag
        acc_i += x.real * k1.imag - x.imag * k1.real + y.real * a.imag - y.imag * a.real
        if upd != 2:
            br[i0] = complex(c * x.real - sn * y.imag, c * x.imag + sn * y.real)
            br[i1] = complex(c * y.real - sn * x.imag, c * y.imag + sn * x.real)
        if upd == 1:
            kr[i0] = complex(c * a.real - sn * k1.imag, c * a.imag + sn * k1.real)
            kr[i1] = complex(c * k1.real - sn * a.imag, c * k1.imag + sn * a.real)
    return gx * acc_r, gx * acc_i


@njit(inline="always")
def _pair_r(br, kr, i0, i1, m00, m01, m10, m11, upd):
    """One amplitude pair of a FUSED run: its four cross-term products ``ket_a conj(bra_b)``,
    then the undo (mode ``upd``: see :func:`adjoint_1q_block`)."""
    a = kr[i0]
    c = kr[i1]
    x = br[i0]
    y = br[i1]
    cx = np.conj(x)
    cy = np.conj(y)
    _undo_pair(br, kr, i0, i1, x, y, a, c, m00, m01, m10, m11, upd)
    return a * cx, a * cy, c * cx, c * cy


@njit(inline="always", fastmath=True)
def _pairs_adjoint_cols_r(br, kr, p0, p1, W, m00, m01, m10, m11, upd, acc):
    """``acc += R`` with ``R[2a+b] = sum ket_a conj(bra_b)`` over the pairs (p0 + j, p1 + j),
    j < W (the wire's 2x2 cross term, every derivative of a fused run comes from it), then
    bra <- inv bra (mode ``upd``: see :func:`adjoint_1q_block`)."""
    r00 = r01 = r10 = r11 = 0j
    for j in range(W):
        d00, d01, d10, d11 = _pair_r(br, kr, p0 + j, p1 + j, m00, m01, m10, m11, upd)
        r00 += d00
        r01 += d01
        r10 += d10
        r11 += d11
    acc[0] += r00
    acc[1] += r01
    acc[2] += r10
    acc[3] += r11


@njit(fastmath=True, cache=True)
def _pairs_adjoint_r(br, kr, base, s, half, m00, m01, m10, m11, upd, acc):
    """:func:`_pairs_adjoint_cols_r` over one block: the pairs of stride s come in runs of s."""
    for o in range(half // s):
        p0 = base + 2 * o * s
        _pairs_adjoint_cols_r(br, kr, p0, p0 + s, s, m00, m01, m10, m11, upd, acc)


GENERAL, DIAGONAL, RX_TYPE, FUSED = 0, 1, 2, 3


@njit(cache=True)
def _gate_kinds(invs, gens, bm, fused):
    """Per gate r: FUSED (a run of gates on one wire, flagged by the caller: the cross term R
    is accumulated instead of one overlap), RX_TYPE (real cos on the diagonal, imaginary sin
    off it, generator a multiple of X), DIAGONAL (diagonal inverse and generator), else GENERAL."""
    R = invs.shape[0]
    kinds = np.zeros(R, dtype=np.int64)
    for r in range(R):
        if fused[r]:
            kinds[r] = FUSED
            continue
        m00 = invs[r, bm, 0, 0]
        m01 = invs[r, bm, 0, 1]
        m10 = invs[r, bm, 1, 0]
        m11 = invs[r, bm, 1, 1]
        if (m00 == m11 and m01 == m10 and m00.imag == 0 and m01.real == 0 and gens[r, 0, 0] == 0
                and gens[r, 1, 1] == 0 and gens[r, 0, 1] == gens[r, 1, 0] and gens[r, 0, 1].imag == 0):
            kinds[r] = RX_TYPE
        elif m01 == 0 and m10 == 0 and gens[r, 0, 1] == 0 and gens[r, 1, 0] == 0:
            kinds[r] = DIAGONAL
    return kinds


def adjoint_1q_block(bras, ket, invs, gens, fused, strides, blk, undo):
    """One backward step over 1-qubit gates on distinct wires (strides < ``blk``): inside
    each cache block, from the last gate to the first, accumulate ``<bra_m|G_r|ket>`` (in
    ``[..., 0]``; for a FUSED run the cross term R in ``[..., 0:4]``) then undo gate r on
    every bra and on the ket (nothing is undone when ``undo`` is false: the last step).
    Returns (M, B, R, 4) complex."""
    M = bras.shape[0]
    B, N = ket.shape
    R = strides.shape[0]
    nblk = N // blk
    half = blk // 2
    out = np.zeros((M, B, R, 4), dtype=np.complex128)
    for b in range(B):
        kr = ket[b]
        bm = b if invs.shape[1] > 1 else 0
        kinds = _gate_kinds(invs, gens, bm, fused)
        part = np.zeros((nblk, M, R, 4), dtype=np.complex128)
        for bi in prange(nblk):
            base = bi * blk
            for r in range(R - 1, -1, -1):
                s = strides[r]
                m00 = invs[r, bm, 0, 0]
                m01 = invs[r, bm, 0, 1]
                m10 = invs[r, bm, 1, 0]
                m11 = invs[r, bm, 1, 1]
                for mm in range(M):
                    # pair helpers' mode: 0 undo the bra, 1 the bra and the ket, 2 nothing;
                    # the ket is undone with the last bra, after all reads
                    upd = (1 if mm == M - 1 else 0) if undo else 2
                    if kinds[r] == FUSED:
                        _pairs_adjoint_r(bras[mm, b], kr, base, s, half, m00, m01, m10, m11, upd,
                                         part[bi, mm, r])
                        continue
                    if kinds[r] == RX_TYPE:
                        ar, ai = _pairs_adjoint_rx(bras[mm, b], kr, base, s, half, m00.real, m01.imag,
                                                   gens[r, 0, 1].real, upd)
                    elif kinds[r] == DIAGONAL:
                        ar, ai = _pairs_adjoint_diag(bras[mm, b], kr, base, s, half, m00, m11,
                                                     gens[r, 0, 0], gens[r, 1, 1], upd)
                    else:
                        ar, ai = _pairs_adjoint(bras[mm, b], kr, base, s, half, m00, m01, m10, m11,
                                                gens[r, 0, 0], gens[r, 0, 1], gens[r, 1, 0], gens[r, 1, 1], upd)
                    part[bi, mm, r, 0] = ar + 1j * ai
        for bi in range(nblk):
            out[:, b] += part[bi]
    return out


@njit(fastmath=True, cache=True)
def _pairs_adjoint_cols_rx(br, kr, p0, p1, W, c, sn, gx, upd):
    """:func:`_pairs_adjoint_cols` for an RX-type gate (see :func:`_pairs_adjoint_rx`)."""
    acc_r = 0.0
    acc_i = 0.0
    for j in range(W):
        a = kr[p0 + j]
        k1 = kr[p1 + j]
        x = br[p0 + j]
        y = br[p1 + j]
        acc_r += x.real * k1.real + x.imag * k1.imag + y.real * a.real + y.imag * a.imag
        acc_i += x.real * k1.imag - x.imag * k1.real + y.real * a.imag - y.imag * a.real
        if upd != 2:
            br[p0 + j] = complex(c * x.real - sn * y.imag, c * x.imag + sn * y.real)
            br[p1 + j] = complex(c * y.real - sn * x.imag, c * y.imag + sn * x.real)
        if upd == 1:
            kr[p0 + j] = complex(c * a.real - sn * k1.imag, c * a.imag + sn * k1.real)
            kr[p1 + j] = complex(c * k1.real - sn * a.imag, c * k1.imag + sn * a.real)
    return gx * acc_r, gx * acc_i


def adjoint_1q_high(bras, ket, invs, gens, fused, hstrides, lowbits, W, undo):
    """:func:`adjoint_1q_block` for gates on high wires (see :func:`apply_1q_high`)."""
    M = bras.shape[0]
    B, N = ket.shape
    R = hstrides.shape[0]
    Lo = 1 << lowbits
    Hh = (N >> lowbits) // 2
    nblk = Lo // W
    out = np.zeros((M, B, R, 4), dtype=np.complex128)
    for b in range(B):
        kr = ket[b]
        bm = b if invs.shape[1] > 1 else 0
        kinds = _gate_kinds(invs, gens, bm, fused)
        part = np.zeros((nblk, M, R, 4), dtype=np.complex128)
        for cb in prange(nblk):
            col0 = cb * W
            for r in range(R - 1, -1, -1):
                hs = hstrides[r]
                m00 = invs[r, bm, 0, 0]
                m01 = invs[r, bm, 0, 1]
                m10 = invs[r, bm, 1, 0]
                m11 = invs[r, bm, 1, 1]
                g00 = gens[r, 0, 0]
                g01 = gens[r, 0, 1]
                g10 = gens[r, 1, 0]
                g11 = gens[r, 1, 1]
                kind = kinds[r]
                for mm in range(M):
                    br = bras[mm, b]
                    upd = (1 if mm == M - 1 else 0) if undo else 2
                    acc = part[cb, mm, r]
                    for hp in range(Hh):
                        h0 = ((hp & ~(hs - 1)) << 1) | (hp & (hs - 1))
                        p0 = (h0 << lowbits) + col0
                        p1 = ((h0 | hs) << lowbits) + col0
                        if kind == FUSED:
                            _pairs_adjoint_cols_r(br, kr, p0, p1, W, m00, m01, m10, m11, upd, acc)
                            continue
                        if kind == RX_TYPE:
                            ar, ai = _pairs_adjoint_cols_rx(br, kr, p0, p1, W, m00.real, m01.imag, g01.real, upd)
                        else:
                            ar, ai = _pairs_adjoint_cols(br, kr, p0, p1, W, m00, m01, m10, m11,
                                                         g00, g01, g10, g11, upd)
                        acc[0] += ar + 1j * ai
        for cb in range(nblk):
            out[:, b] += part[cb]
    return out
