"""numba kernels for observables (Pauli words, Z diagonals, overlaps), in place where they update a state.

They trust their inputs (see :mod:`qhybrid.sim.fastkernels`); compiled serial and
threaded through :func:`qhybrid.sim.registry.kernel`.
"""
from __future__ import annotations

import numpy as np

from .bitops import parity, sign_table  # noqa: F401
from .jit import njit, prange  # noqa: F401  (prange: threaded loops once registered)
from .registry import register


@register
def pauli_expval(state, xmask, zmask):
    """``sum_s conj(psi[s^x]) (-1)^popcount(s&z) psi[s]`` per batch row (times i^nY outside).

    The index is split as ``hi | lo`` (``lo`` the low 10 bits): the sign of the low part
    comes from a small table, the high part's once per chunk, so the inner loop is plain."""
    B, N = state.shape
    L = min(N, 1024)
    sign_lo = sign_table(L, zmask & (L - 1))
    xl = xmask & (L - 1)
    out = np.zeros(B, dtype=np.complex128)
    nchunk = N // L
    for b in range(B):
        row = state[b]
        pr = np.zeros(nchunk)
        pi = np.zeros(nchunk)
        for h in prange(nchunk):
            hi = h * L
            sh = -1.0 if parity(hi & zmask) else 1.0
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


@njit(inline="always")
def _term_at(dh, t, coeffs, xmasks, zmasks, L):
    """(source chunk start, signed coefficient) of term t for the output chunk at ``dh``."""
    sh = (dh ^ xmasks[t]) & ~(L - 1)
    return sh, (-coeffs[t] if parity(sh & zmasks[t]) else coeffs[t])


#: Runs from which the permuted loops of :func:`pauli_sum_accumulate` go run by run.
VECTOR_RUN = 8


@njit(inline="always")
def _times_i(v, im):
    """``i v`` when ``im`` (the parts swapped, which vectorizes), else ``v``."""
    return complex(-v.imag, v.real) if im else v


@njit(inline="always")
def _sum_terms(tgt, t, t1, im, dh, row, signs, coeffs, xmasks, zmasks, L):
    """``tgt[j] += sum_{t <= u < t1} c_u sign_u[j] row[source_u + j]``, times ``i`` when ``im``
    (terms of one ``xl``, in their source frame): contiguous loops, four terms per loop."""
    while t + 4 <= t1:
        sa, ca = _term_at(dh, t, coeffs, xmasks, zmasks, L)
        sb, cb = _term_at(dh, t + 1, coeffs, xmasks, zmasks, L)
        sc, cc = _term_at(dh, t + 2, coeffs, xmasks, zmasks, L)
        sd, cd = _term_at(dh, t + 3, coeffs, xmasks, zmasks, L)
        qa, qb, qc, qd = signs[t], signs[t + 1], signs[t + 2], signs[t + 3]
        ra, rb, rc, rd = row[sa:sa + L], row[sb:sb + L], row[sc:sc + L], row[sd:sd + L]
        for j in range(L):
            tgt[j] += _times_i(((ca * qa[j]) * ra[j] + (cb * qb[j]) * rb[j])
                               + ((cc * qc[j]) * rc[j] + (cd * qd[j]) * rd[j]), im)
        t += 4
    while t < t1:
        sa, ca = _term_at(dh, t, coeffs, xmasks, zmasks, L)
        qa = signs[t]
        ra = row[sa:sa + L]
        for j in range(L):
            tgt[j] += _times_i((ca * qa[j]) * ra[j], im)
        t += 1


@register
def pauli_sum_accumulate(out, state, coeffs, xmasks, zmasks, gstart, gimag, L):
    """``out[b] += sum_t c_t P_t state[b]`` for many Pauli words in one pass over ``out``, where
    ``c_t = coeffs[t]`` (real), times ``i`` for the imaginary terms: a real factor times a
    complex amplitude vectorizes, a complex one does not.

    Per ``L``-amplitude output chunk (in cache), every term reads its source chunk
    ``(chunk ^ x) & ~(L-1)`` at ``lo ^ xl`` (``xl`` the low bits of its X mask). Terms come
    grouped by ``xl`` (``gstart``: group bounds; the group's imaginary terms from ``gimag[g]``
    on, see :func:`sort_pauli_terms`); a group of several terms sums its sources in the source
    frame with contiguous (vectorized) loops, four terms per loop (one load and store of the
    sum per four terms), into a buffer ``A``, and adds it permuted, ``acc[lo] += A[lo ^ xl]``,
    once; the ``xl = 0`` group adds straight into the chunk; a lone term gathers directly.
    ``lo ^ xl`` maps runs of ``r`` amplitudes (``r`` the lowest bit of ``xl``) onto runs: from
    :data:`VECTOR_RUN` on, the permuted loops go run by run."""
    B, N = state.shape
    T = coeffs.shape[0]
    G = gstart.shape[0] - 1
    signs = np.empty((T, L), dtype=coeffs.dtype)
    for t in range(T):
        signs[t] = sign_table(L, zmasks[t] & (L - 1))
    nchunk = N // L
    for b in range(B):
        row = state[b]
        orow = out[b]
        for h in prange(nchunk):
            dh = h * L
            acc = np.zeros(L, dtype=orow.dtype)
            A = np.empty(L, dtype=orow.dtype)
            for g in range(G):
                t0 = gstart[g]
                tm = gimag[g]
                t1 = gstart[g + 1]
                xl = xmasks[t0] & (L - 1)
                r = xl & -xl
                if xl == 0:
                    _sum_terms(acc, t0, tm, False, dh, row, signs, coeffs, xmasks, zmasks, L)
                    _sum_terms(acc, tm, t1, True, dh, row, signs, coeffs, xmasks, zmasks, L)
                elif t1 - t0 == 1:  # a lone term: gathered straight into the chunk
                    sh, c = _term_at(dh, t0, coeffs, xmasks, zmasks, L)
                    st = signs[t0]
                    im = tm == t0
                    if r >= VECTOR_RUN:
                        for base in range(0, L, r):
                            sb = base ^ xl
                            a = acc[base:base + r]
                            q = st[sb:sb + r]
                            src = row[sh + sb:sh + sb + r]
                            for j in range(r):
                                a[j] += _times_i((c * q[j]) * src[j], im)
                    else:
                        for lo in range(L):
                            s = lo ^ xl
                            acc[lo] += _times_i((c * st[s]) * row[sh + s], im)
                else:
                    A[:] = 0
                    _sum_terms(A, t0, tm, False, dh, row, signs, coeffs, xmasks, zmasks, L)
                    _sum_terms(A, tm, t1, True, dh, row, signs, coeffs, xmasks, zmasks, L)
                    if r >= VECTOR_RUN:
                        for base in range(0, L, r):
                            a = acc[base:base + r]
                            u = A[base ^ xl:(base ^ xl) + r]
                            for j in range(r):
                                a[j] += u[j]
                    else:
                        for lo in range(L):
                            acc[lo] += A[lo ^ xl]
            for lo in range(L):
                orow[dh + lo] += acc[lo]


def sort_pauli_terms(xmasks, imag, L):
    """(order, gstart, gimag) for :func:`pauli_sum_accumulate`: terms grouped by the low bits of
    their X mask (``gstart``: group bounds), real terms first in each group (``gimag[g]``: where
    its imaginary ones start), then by the high bits (terms reading the same source chunk run
    back to back)."""
    low = xmasks & (L - 1)
    order = np.lexsort((xmasks >> (L.bit_length() - 1), imag, low))
    sl = low[order]
    gstart = np.concatenate(([0], np.nonzero(np.diff(sl))[0] + 1, [len(sl)])).astype(np.int64)
    real = np.concatenate(([0], np.cumsum(imag[order] == 0)))  # real terms before each position
    gimag = (gstart[:-1] + real[gstart[1:]] - real[gstart[:-1]]).astype(np.int64)
    return order, gstart, gimag


@register
def zdiag_accumulate(out, coeff, zmask):
    """``out[c] += coeff * (-1)^popcount(c & z)`` for a real diagonal ``out``."""
    N = out.shape[0]
    for c in prange(N):
        if parity(c & zmask):
            out[c] -= coeff
        else:
            out[c] += coeff


@register
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


@register
def diag_mul_into(out, state, d):
    """``out[r, c] = d[c] * state[r, c]`` for a real diagonal ``d``."""
    B, N = state.shape
    for r in range(B):
        o = out[r]
        s = state[r]
        for c in prange(N):
            o[c] = s[c] * d[c]
