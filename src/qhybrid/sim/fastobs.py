"""numba kernels for observables (Pauli words, Z diagonals, overlaps), in place where they update a state.

They trust their inputs (see :mod:`qhybrid.sim.fastkernels`); compiled serial and
threaded through :func:`qhybrid.sim.fastkernels.kernel`.
"""
from __future__ import annotations

import numpy as np
from numba import prange  # (threaded loops; these functions are compiled where they are registered)

from .fastkernels import _parity, _sign_table  # noqa: F401


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


def diag_mul_into(out, state, d):
    """``out[r, c] = d[c] * state[r, c]`` for a real diagonal ``d``."""
    B, N = state.shape
    for r in range(B):
        o = out[r]
        s = state[r]
        for c in prange(N):
            o[c] = s[c] * d[c]
