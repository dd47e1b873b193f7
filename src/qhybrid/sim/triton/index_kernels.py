"""Triton kernels (``@triton.jit``) that move amplitudes across the index, on planes as in :mod:`.kernels`.

A CNOT, a SWAP, a ladder of them and a Pauli word's bit flips read amplitude ``c`` together with
amplitude ``c ^ something``: no 2x2 arithmetic, only an index map. Grids are ``(tiles, B)``,
offsets int64, every load and store masked to the state.

- :func:`swap_kernel`: exchange ``x | p_bits`` and ``x | q_bits`` for every ``x`` with zeros at
  two index bits (a CNOT: ``p`` = the control, ``q`` = control and target; a SWAP: one bit each);
  in place, half the state read and written.
- :func:`gather_kernel`: ``out[j] = src[h(j)]``, ``h`` a GF(2)-linear map given as ten-bit digit
  tables (:func:`qhybrid.sim.bind.ladder_tables`): a whole CNOT / SWAP ladder in one pass.
- :func:`pauli_reduce_kernel`: per-tile float64 partial sums of
  ``conj(a[c]) (-1)^{popcount((c ^ x) & z)} a[c ^ x]`` (a Pauli word's expectation).
- :func:`pauli_sum_kernel`: ``out[c] += sum_t coef_t (-1)^{popcount((c ^ x_t) & z_t)} a[c ^ x_t]``,
  every term in one pass over ``out``.

They trust their inputs (the launchers in :mod:`.index_ops` make them).
"""
from __future__ import annotations

import triton
import triton.language as tl

from .kernels import _parity

#: bits of one digit of a gather table (a table has 1024 entries per digit)
DIGIT_BITS = 10


@triton.jit
def swap_kernel(x_ptr, N, PS, lo_mask, hi_mask, p_bits, q_bits, BLOCK: tl.constexpr, ZS: tl.constexpr):
    """Exchange amplitudes ``r' | p_bits`` and ``r' | q_bits``, ``r'`` the program's quarter index
    ``r`` with zero bits inserted at index bits ``lo < hi`` (``lo_mask = 2**lo - 1``, ``hi_mask =
    2**hi - 1``)."""
    b = tl.program_id(1).to(tl.int64)
    base = x_ptr + b * 2 * N
    r = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = r < (N >> 2)
    low = r & lo_mask
    r = ((r - low) << 1) | low
    low = r & hi_mask
    r = ((r - low) << 1) | low
    p = r | p_bits
    q = r | q_bits
    pr = tl.load(base + p * ZS, mask=mask, other=0.0)
    pi = tl.load(base + PS + p * ZS, mask=mask, other=0.0)
    qr = tl.load(base + q * ZS, mask=mask, other=0.0)
    qi = tl.load(base + PS + q * ZS, mask=mask, other=0.0)
    tl.store(base + p * ZS, qr, mask=mask)
    tl.store(base + PS + p * ZS, qi, mask=mask)
    tl.store(base + q * ZS, pr, mask=mask)
    tl.store(base + PS + q * ZS, pi, mask=mask)


@triton.jit
def gather_kernel(src_ptr, out_ptr, N, PS, t_ptr, DIGITS: tl.constexpr, BLOCK: tl.constexpr, ZS: tl.constexpr):
    """``out[b, j] = src[b, h(j)]``, ``h(j)`` the XOR of ``t[d][(j >> 10 d) & 1023]`` over ``DIGITS``
    digits (``t`` int64 ``(4, 1024)``); ``out`` another buffer."""
    b = tl.program_id(1).to(tl.int64)
    j = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = j < N
    h = tl.zeros((BLOCK,), tl.int64)
    for d in tl.static_range(DIGITS):
        h ^= tl.load(t_ptr + d * 1024 + ((j >> (d * 10)) & 1023), mask=mask, other=0)
    src = src_ptr + b * 2 * N
    out = out_ptr + b * 2 * N
    re = tl.load(src + h * ZS, mask=mask, other=0.0)
    im = tl.load(src + PS + h * ZS, mask=mask, other=0.0)
    tl.store(out + j * ZS, re, mask=mask)
    tl.store(out + PS + j * ZS, im, mask=mask)


@triton.jit
def pauli_reduce_kernel(a_ptr, N, PS, x_bits, z_bits, out_ptr, P, BLOCK: tl.constexpr, ZS: tl.constexpr):
    """Per tile: ``sum_c conj(a[c]) sign(c) a[c ^ x_bits]``, ``sign(c) = (-1)^{popcount((c ^ x_bits)
    & z_bits)}``, as (re, im) float64 into ``out[(row * P + tile) * 2 + {0, 1}]``."""
    row = tl.program_id(1).to(tl.int64)
    tile = tl.program_id(0).to(tl.int64)
    base = a_ptr + row * 2 * N
    c = tile * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = c < N
    s = c ^ x_bits
    sign = (1 - 2 * _parity(s & z_bits)).to(tl.float64)
    ar = tl.load(base + c * ZS, mask=mask, other=0.0).to(tl.float64)
    ai = tl.load(base + PS + c * ZS, mask=mask, other=0.0).to(tl.float64)
    br = tl.load(base + s * ZS, mask=mask, other=0.0).to(tl.float64)
    bi = tl.load(base + PS + s * ZS, mask=mask, other=0.0).to(tl.float64)
    tl.store(out_ptr + (row * P + tile) * 2, tl.sum(sign * (ar * br + ai * bi), axis=0))
    tl.store(out_ptr + (row * P + tile) * 2 + 1, tl.sum(sign * (ar * bi - ai * br), axis=0))


@triton.jit
def pauli_sum_kernel(a_ptr, out_ptr, N, PS, coef_ptr, x_ptr, z_ptr, terms, BLOCK: tl.constexpr,
                     ZS: tl.constexpr):
    """``out[c] += sum_t coef[t] (-1)^{popcount((c ^ x[t]) & z[t])} a[c ^ x[t]]`` over ``terms`` words
    (``coef`` (re, im) pairs in the state's real dtype, ``x`` / ``z`` int64); ``out`` another buffer."""
    row = tl.program_id(1).to(tl.int64)
    c = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = c < N
    a = a_ptr + row * 2 * N
    o = out_ptr + row * 2 * N
    acc_r = tl.load(o + c * ZS, mask=mask, other=0.0)
    acc_i = tl.load(o + PS + c * ZS, mask=mask, other=0.0)
    for t in range(terms):
        cr = tl.load(coef_ptr + 2 * t)
        ci = tl.load(coef_ptr + 2 * t + 1)
        s = c ^ tl.load(x_ptr + t)
        sign = (1 - 2 * _parity(s & tl.load(z_ptr + t))).to(acc_r.dtype)
        br = tl.load(a + s * ZS, mask=mask, other=0.0) * sign
        bi = tl.load(a + PS + s * ZS, mask=mask, other=0.0) * sign
        acc_r += cr * br - ci * bi
        acc_i += cr * bi + ci * br
    tl.store(o + c * ZS, acc_r, mask=mask)
    tl.store(o + PS + c * ZS, acc_i, mask=mask)


__all__ = ["swap_kernel", "gather_kernel", "pauli_reduce_kernel", "pauli_sum_kernel", "DIGIT_BITS"]
