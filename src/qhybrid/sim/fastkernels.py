"""numba kernels for CPU states, in place: one pass over the state each.

They trust their inputs: ``state`` is a C-contiguous ``(B, 2**n)`` complex
numpy view of the torch state (shared memory), matrices have a leading batch
axis of 1 or B, strides are powers of two (``stride = 2**(n-1-wire)``).
:mod:`qhybrid.sim.apply` chooses between these and the torch reference.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

_OPTS = dict(parallel=True, cache=True, fastmath=True, nogil=True)
_SERIAL = dict(parallel=False, cache=True, fastmath=True, nogil=True)

#: States with at least this many amplitudes use the threaded kernels; below it the
#: serial ones (a parallel region costs more than a small pass, worse on a busy machine).
PARALLEL_MIN = 1 << 18


@njit(inline="always")
def _parity(x):
    x ^= x >> 32
    x ^= x >> 16
    x ^= x >> 8
    x ^= x >> 4
    x ^= x >> 2
    x ^= x >> 1
    return x & 1


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


def phase_lookup(state, table, index):
    """``state[b, i] *= table[b, index[i]]`` (a fused phase pass from a small table)."""
    B, N = state.shape
    for b in range(B):
        t = table[b if table.shape[0] > 1 else 0]
        row = state[b]
        for i in prange(N):
            row[i] *= t[index[i]]


@njit(cache=True)
def _sign_table(L, zmask):
    t = np.empty(L)
    for lo in range(L):
        t[lo] = -1.0 if _parity(lo & zmask) else 1.0
    return t


def pauli_expval(state, xmask, zmask):
    """``sum_s conj(psi[s^x]) (-1)^popcount(s&z) psi[s]`` per batch row (times i^nY outside).

    The index is split as ``hi | lo`` (``lo`` the low 10 bits): the sign of the low part
    comes from a small table, the high part's once per chunk, so the inner loop is plain."""
    B, N = state.shape
    L = min(N, 1024)
    sign_lo = _sign_table(L, zmask & (L - 1))
    xl = xmask & (L - 1)
    out = np.zeros(B, dtype=np.complex128)
    nchunk = N // L
    for b in range(B):
        row = state[b]
        pr = np.zeros(nchunk)
        pi = np.zeros(nchunk)
        for h in prange(nchunk):
            hi = h * L
            sh = -1.0 if _parity(hi & zmask) else 1.0
            dh = (hi ^ xmask) & ~(L - 1)
            ar = 0.0
            ai = 0.0
            for lo in range(L):
                v = np.conj(row[dh + (lo ^ xl)]) * row[hi + lo] * sign_lo[lo]
                ar += v.real
                ai += v.imag
            pr[h] = sh * ar
            pi[h] = sh * ai
        out[b] = pr.sum() + 1j * pi.sum()
    return out


def pauli_accumulate(out, state, coeffs, xmask, zmask):
    """``out[b, s ^ x] += coeffs[b] * (-1)^popcount(s & z) * state[b, s]`` (split as in pauli_expval)."""
    B, N = state.shape
    L = min(N, 1024)
    sign_lo = _sign_table(L, zmask & (L - 1))
    xl = xmask & (L - 1)
    nchunk = N // L
    for b in range(B):
        cf = coeffs[b if coeffs.shape[0] > 1 else 0]
        row = state[b]
        orow = out[b]
        for h in prange(nchunk):
            hi = h * L
            c = -cf if _parity(hi & zmask) else cf
            dh = (hi ^ xmask) & ~(L - 1)
            for lo in range(L):
                orow[dh + (lo ^ xl)] += c * sign_lo[lo] * row[hi + lo]


def pauli_sum_accumulate(out, state, coeffs, xmasks, zmasks):
    """``out[b] += sum_t coeffs[t] P_t state[b]`` for many Pauli words in one pass over ``out``:
    each 1024-amplitude output chunk gathers from every term's source chunk while it sits in L1."""
    B, N = state.shape
    T = coeffs.shape[0]
    L = min(N, 1024)
    signs = np.empty((T, L))
    for t in range(T):
        signs[t] = _sign_table(L, zmasks[t] & (L - 1))
    nchunk = N // L
    for b in range(B):
        row = state[b]
        orow = out[b]
        for h in prange(nchunk):
            dh = h * L
            acc = np.zeros(L, dtype=orow.dtype)
            for t in range(T):
                xl = xmasks[t] & (L - 1)
                sh = (dh ^ xmasks[t]) & ~(L - 1)
                c = -coeffs[t] if _parity(sh & zmasks[t]) else coeffs[t]
                st = signs[t]
                for lo in range(L):
                    src = lo ^ xl
                    acc[lo] += c * st[src] * row[sh + src]
            for lo in range(L):
                orow[dh + lo] += acc[lo]


def zdiag_accumulate(out, coeff, zmask):
    """``out[c] += coeff * (-1)^popcount(c & z)`` for a real diagonal ``out``."""
    N = out.shape[0]
    for c in prange(N):
        if _parity(c & zmask):
            out[c] -= coeff
        else:
            out[c] += coeff


def weighted_norm(state, diag):
    """``sum_c |psi[b, c]|^2 diag[c]`` per batch row."""
    B, N = state.shape
    out = np.zeros(B)
    for b in range(B):
        row = state[b]
        acc = 0.0
        for c in prange(N):
            v = row[c]
            acc += (v.real * v.real + v.imag * v.imag) * diag[c]
        out[b] = acc
    return out


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


def imag_overlap(bra, ket, out):
    """``out[c] = sum_b Im(conj(bra[b, c]) ket[b, c])`` ... per row b: out (B, N) real."""
    B, N = ket.shape
    for b in range(B):
        br = bra[b]
        kr = ket[b]
        o = out[b]
        for c in prange(N):
            v = np.conj(br[c]) * kr[c]
            o[c] = v.imag


def parity_index(out, masks, group, strides):
    """``out[c] = sum_g strides[group[g]] * parity(c & masks[g])`` (a lookup index)."""
    N = out.shape[0]
    M = masks.shape[0]
    for c in prange(N):
        j = 0
        for g in range(M):
            j += strides[group[g]] * _parity(c & masks[g])
        out[c] = j


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


def diag_mul_into(out, state, d):
    """``out[r, c] = d[c] * state[r, c]`` for a real diagonal ``d``."""
    B, N = state.shape
    for r in range(B):
        o = out[r]
        s = state[r]
        for c in prange(N):
            o[c] = s[c] * d[c]


@njit(fastmath=True, cache=True)
def _pairs_adjoint(br, kr, base, s, half, m00, m01, m10, m11, g00, g01, g10, g11):
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
        br[i0] = m00 * x + m01 * y
        br[i1] = m10 * x + m11 * y
    return acc_r, acc_i


@njit(fastmath=True, cache=True)
def _pairs_apply(row, base, s, half, m00, m01, m10, m11):
    for i in range(half):
        i0 = base + (((i & ~(s - 1)) << 1) | (i & (s - 1)))
        i1 = i0 | s
        a = row[i0]
        c = row[i1]
        row[i0] = m00 * a + m01 * c
        row[i1] = m10 * a + m11 * c


@njit(fastmath=True, cache=True)
def _pairs_adjoint_cols(br, kr, p0, p1, W, m00, m01, m10, m11, g00, g01, g10, g11):
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
        br[p0 + j] = m00 * x + m01 * y
        br[p1 + j] = m10 * x + m11 * y
    return acc_r, acc_i


def apply_1q_block(state, mats, strides, blk):
    """Several 2x2 gates (``mats[r]`` (Bm, 2, 2), distinct wires, strides < ``blk``) applied
    block by block: each ``blk``-amplitude block stays in cache for all of them."""
    B, N = state.shape
    R = strides.shape[0]
    nblk = N // blk
    for b in range(B):
        row = state[b]
        bm = b if mats.shape[1] > 1 else 0
        for bi in prange(nblk):
            for r in range(R):
                _pairs_apply(row, bi * blk, strides[r], blk // 2, mats[r, bm, 0, 0], mats[r, bm, 0, 1],
                             mats[r, bm, 1, 0], mats[r, bm, 1, 1])


def adjoint_1q_block(bras, ket, invs, gens, strides, blk):
    """One backward step over several 1-qubit gates on distinct wires (strides < ``blk``):
    inside each cache block, from the last gate to the first, accumulate
    ``<bra_m|G_r|ket>`` then undo gate r on every bra and on the ket. Returns (M, B, R)."""
    M = bras.shape[0]
    B, N = ket.shape
    R = strides.shape[0]
    nblk = N // blk
    half = blk // 2
    out = np.zeros((M, B, R), dtype=np.complex128)
    for b in range(B):
        kr = ket[b]
        bm = b if invs.shape[1] > 1 else 0
        part_r = np.zeros((nblk, M, R))
        part_i = np.zeros((nblk, M, R))
        for bi in prange(nblk):
            base = bi * blk
            for r in range(R - 1, -1, -1):
                s = strides[r]
                m00 = invs[r, bm, 0, 0]
                m01 = invs[r, bm, 0, 1]
                m10 = invs[r, bm, 1, 0]
                m11 = invs[r, bm, 1, 1]
                for mm in range(M):
                    ar, ai = _pairs_adjoint(bras[mm, b], kr, base, s, half, m00, m01, m10, m11,
                                            gens[r, 0, 0], gens[r, 0, 1], gens[r, 1, 0], gens[r, 1, 1])
                    part_r[bi, mm, r] = ar
                    part_i[bi, mm, r] = ai
                _pairs_apply(kr, base, s, half, m00, m01, m10, m11)
        for bi in range(nblk):
            for mm in range(M):
                for r in range(R):
                    out[mm, b, r] += part_r[bi, mm, r] + 1j * part_i[bi, mm, r]
    return out

def apply_1q_high(state, mats, hstrides, lowbits, W):
    """1-qubit gates on high wires (stride ``hstrides[r] << lowbits``), in order, one pass:
    a block is ``W`` consecutive columns of every ``2**lowbits``-row, so all high-wire
    pairs of the block are inside it."""
    B, N = state.shape
    R = hstrides.shape[0]
    Lo = 1 << lowbits
    Hh = (N >> lowbits) // 2
    for b in range(B):
        row = state[b]
        bm = b if mats.shape[1] > 1 else 0
        for cb in prange(Lo // W):
            col0 = cb * W
            for r in range(R):
                hs = hstrides[r]
                m00 = mats[r, bm, 0, 0]
                m01 = mats[r, bm, 0, 1]
                m10 = mats[r, bm, 1, 0]
                m11 = mats[r, bm, 1, 1]
                for hp in range(Hh):
                    h0 = ((hp & ~(hs - 1)) << 1) | (hp & (hs - 1))
                    p0 = (h0 << lowbits) + col0
                    p1 = ((h0 | hs) << lowbits) + col0
                    for j in range(W):
                        a = row[p0 + j]
                        c = row[p1 + j]
                        row[p0 + j] = m00 * a + m01 * c
                        row[p1 + j] = m10 * a + m11 * c


def adjoint_1q_high(bras, ket, invs, gens, hstrides, lowbits, W):
    """:func:`adjoint_1q_block` for gates on high wires (see :func:`apply_1q_high`)."""
    M = bras.shape[0]
    B, N = ket.shape
    R = hstrides.shape[0]
    Lo = 1 << lowbits
    Hh = (N >> lowbits) // 2
    nblk = Lo // W
    out = np.zeros((M, B, R), dtype=np.complex128)
    for b in range(B):
        kr = ket[b]
        bm = b if invs.shape[1] > 1 else 0
        part_r = np.zeros((nblk, M, R))
        part_i = np.zeros((nblk, M, R))
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
                for mm in range(M):
                    br = bras[mm, b]
                    acc_r = 0.0
                    acc_i = 0.0
                    for hp in range(Hh):
                        h0 = ((hp & ~(hs - 1)) << 1) | (hp & (hs - 1))
                        p0 = (h0 << lowbits) + col0
                        p1 = ((h0 | hs) << lowbits) + col0
                        ar, ai = _pairs_adjoint_cols(br, kr, p0, p1, W, m00, m01, m10, m11, g00, g01, g10, g11)
                        acc_r += ar
                        acc_i += ai
                    part_r[cb, mm, r] = acc_r
                    part_i[cb, mm, r] = acc_i
                for hp in range(Hh):
                    h0 = ((hp & ~(hs - 1)) << 1) | (hp & (hs - 1))
                    p0 = (h0 << lowbits) + col0
                    p1 = ((h0 | hs) << lowbits) + col0
                    for j in range(W):
                        a = kr[p0 + j]
                        c = kr[p1 + j]
                        kr[p0 + j] = m00 * a + m01 * c
                        kr[p1 + j] = m10 * a + m11 * c
        for cb in range(nblk):
            for mm in range(M):
                for r in range(R):
                    out[mm, b, r] += part_r[cb, mm, r] + 1j * part_i[cb, mm, r]
    return out


_KERNELS = ['apply_1q', 'apply_2q', 'apply_diag', 'phase_lookup', 'pauli_expval', 'pauli_accumulate', 'zdiag_accumulate', 'weighted_norm', 'grad_1q', 'grad_diag', 'imag_overlap', 'parity_index', 'zrot_grads', 'adjoint_1q', 'adjoint_2q', 'vdot_real', 'diag_mul_into', 'swap_pairs', 'apply_1q_block', 'adjoint_1q_block', 'pauli_sum_accumulate', 'apply_1q_high', 'adjoint_1q_high']
_PAR = {}
_SER = {}
for _name in _KERNELS:
    _f = globals()[_name]
    _PAR[_name] = njit(**_OPTS)(_f)
    _SER[_name] = njit(**_SERIAL)(_f)


def kernel(name: str, size: int):
    """The compiled kernel ``name``: threaded for states of ``size`` >= PARALLEL_MIN, else serial."""
    return (_PAR if size >= PARALLEL_MIN else _SER)[name]
