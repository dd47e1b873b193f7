"""The Triton kernels (``@triton.jit``): planar states, one program per tile.

Triton has no complex type: a state is read as two real planes (float64 for complex128, float32
for complex64). Row ``b``'s amplitude ``z`` has its real part at ``x + b * 2N + z * ZS`` and its
imaginary part ``PS`` further: a planar tensor ``(B, 2, N)`` (``ZS = 1, PS = N``) or a complex
tensor ``(B, N)`` read in place as interleaved floats (``ZS = 2, PS = 1``); ``N = 2**m``. Index bit ``p`` of an
amplitude is wire ``m - 1 - p`` (wire 0 most significant). Every kernel's grid is
``(tiles, B)``; offsets are int64; every load and store is masked to the state.

- :func:`pass_kernel`: one pass over a group of ``G`` index bits: a tile holds ``2**G``
  amplitudes per row (all values of those bits) for ``BLOCK_R`` rows (values of the other
  bits); it applies butterflies or ``G`` 2x2 gates, then a diagonal looked up per amplitude,
  then butterflies or gates again. The fused 1-qubit layer, the Walsh-Hadamard passes of the
  QAOA mixer and the cost phase are all this kernel.
- :func:`dense_kernel`: a dense ``2**K x 2**K`` matrix on ``K`` target bits, on the amplitudes
  whose control bits are all 1.
- :func:`diag_kernel`: a diagonal over ``K`` bits.
- :func:`reduce_kernel`: per-tile partial sums of ``w |a|^2`` or ``w conj(a) b`` (float64),
  ``w`` a weight per amplitude (none, a value, a table lookup, or a sum of Pauli-Z strings).
- :func:`scale_kernel`: ``out = w * a`` with the same weights.

They trust their inputs (the launchers in :mod:`.ops` make them).
"""
from __future__ import annotations

import triton
import triton.language as tl

#: ``pass_kernel`` stages: nothing, unnormalised butterflies ``(a, b) -> (a + b, a - b)``, 2x2 gates
NONE, BUTTERFLY, GATES = 0, 1, 2
#: diagonals: nothing, ``lut[index[z] + shift]`` (complex table), ``exp(-i gamma values[z])``
LOOKUP, DIRECT = 1, 2
#: reduce/scale weights: 1, ``values[z]``, ``table[index[z] + shift]`` (real), Pauli-Z strings
W_ONE, W_VALUES, W_LOOKUP, W_PAULIZ = 0, 1, 2, 3


@triton.jit
def _combine(re, im, m00r, m00i, m01r, m01i, m10r, m10i, m11r, m11i,
             T: tl.constexpr, J: tl.constexpr, MODE: tl.constexpr):
    """Apply a 2x2 (or a butterfly) to bit ``J`` of a flat tile of ``T`` amplitudes."""
    inner: tl.constexpr = 1 << J
    outer: tl.constexpr = T // (2 * inner)
    a0r, a1r = tl.split(tl.permute(tl.reshape(re, (outer, 2, inner)), (0, 2, 1)))
    a0i, a1i = tl.split(tl.permute(tl.reshape(im, (outer, 2, inner)), (0, 2, 1)))
    if MODE == 1:
        b0r = a0r + a1r
        b0i = a0i + a1i
        b1r = a0r - a1r
        b1i = a0i - a1i
    else:
        b0r = m00r * a0r - m00i * a0i + m01r * a1r - m01i * a1i
        b0i = m00r * a0i + m00i * a0r + m01r * a1i + m01i * a1r
        b1r = m10r * a0r - m10i * a0i + m11r * a1r - m11i * a1i
        b1i = m10r * a0i + m10i * a0r + m11r * a1i + m11i * a1r
    re = tl.reshape(tl.permute(tl.join(b0r, b1r), (0, 2, 1)), (T,))
    im = tl.reshape(tl.permute(tl.join(b0i, b1i), (0, 2, 1)), (T,))
    return re, im


@triton.jit
def _stage(re, im, m_ptr, T: tl.constexpr, G: tl.constexpr, MODE: tl.constexpr):
    """Nothing (MODE 0), butterflies (MODE 1) or the ``G`` gates at ``m_ptr`` (MODE 2, 8 floats each)."""
    for j in tl.static_range(G):
        if MODE == 2:
            m = m_ptr + j * 8
            re, im = _combine(re, im, tl.load(m), tl.load(m + 1), tl.load(m + 2), tl.load(m + 3),
                              tl.load(m + 4), tl.load(m + 5), tl.load(m + 6), tl.load(m + 7), T, j, MODE)
        elif MODE == 1:
            re, im = _combine(re, im, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, T, j, MODE)
    return re, im


@triton.jit
def _spread(r, sorted_ptr, NB: tl.constexpr):
    """``r`` with a zero bit inserted at each of the ``NB`` ascending positions at ``sorted_ptr``."""
    for j in tl.static_range(NB):
        p = tl.load(sorted_ptr + j).to(tl.int64)
        low = r & ((1 << p) - 1)
        r = ((r - low) << 1) | low
    return r


@triton.jit
def pass_kernel(x_ptr, N, PS, pos_ptr, sorted_ptr, mat_ptr, mat_bstride, index_ptr, shift, lut_ptr, lut_len,
                lut_bstride, scal_ptr, G: tl.constexpr, BLOCK_R: tl.constexpr, PRE: tl.constexpr,
                DIAG: tl.constexpr, POST: tl.constexpr, INIT: tl.constexpr, ZS: tl.constexpr):
    """One pass over the ``G`` bits at ``pos_ptr`` (tile bit ``j`` = index bit ``pos[j]``):
    [x = amp (INIT)] -> PRE stage -> diagonal -> POST stage. ``mat_ptr`` holds the PRE gates
    then the POST gates of batch row b at ``mat_ptr + b * mat_bstride``; ``scal_ptr`` the float64
    ``(gamma, amp)`` (a float argument would be float32)."""
    T: tl.constexpr = BLOCK_R << G
    b = tl.program_id(1).to(tl.int64)
    base = x_ptr + b * 2 * N
    t = tl.arange(0, T)
    r = tl.program_id(0).to(tl.int64) * BLOCK_R + (t >> G).to(tl.int64)
    c = t & ((1 << G) - 1)
    off = _spread(r, sorted_ptr, G)
    for j in tl.static_range(G):
        off += ((c >> j) & 1).to(tl.int64) << tl.load(pos_ptr + j).to(tl.int64)
    mask = r < (N >> G)
    if INIT:
        re = tl.zeros((T,), x_ptr.dtype.element_ty) + tl.load(scal_ptr + 1).to(x_ptr.dtype.element_ty)
        im = tl.zeros((T,), x_ptr.dtype.element_ty)
    else:
        re = tl.load(base + off * ZS, mask=mask, other=0.0)
        im = tl.load(base + PS + off * ZS, mask=mask, other=0.0)
    m_ptr = mat_ptr + b * mat_bstride
    re, im = _stage(re, im, m_ptr, T, G, PRE)
    if DIAG == 1:
        k = tl.load(index_ptr + off, mask=mask, other=0).to(tl.int64) + shift
        lut = lut_ptr + b * lut_bstride
        dr = tl.load(lut + k, mask=mask, other=0.0)
        di = tl.load(lut + lut_len + k, mask=mask, other=0.0)
        re, im = re * dr - im * di, re * di + im * dr
    elif DIAG == 2:
        ang = tl.load(index_ptr + off, mask=mask, other=0.0).to(tl.float64) * tl.load(scal_ptr)
        dr = tl.cos(ang).to(re.dtype)
        di = -tl.sin(ang).to(re.dtype)
        re, im = re * dr - im * di, re * di + im * dr
    re, im = _stage(re, im, m_ptr + 8 * G, T, G, POST)
    tl.store(base + off * ZS, re, mask=mask)
    tl.store(base + PS + off * ZS, im, mask=mask)


@triton.jit
def dense_kernel(x_ptr, N, PS, tpos_ptr, sorted_ptr, cmask, mat_ptr, mat_bstride, K: tl.constexpr,
                 NF: tl.constexpr, BLOCK_R: tl.constexpr, ZS: tl.constexpr):
    """A dense ``2**K`` matrix (planar, row-major, ``(2, D, D)``) on the target bits at ``tpos_ptr``
    (target 0 = the matrix index's most significant bit); ``NF`` fixed bits (targets and controls,
    ascending at ``sorted_ptr``), the controls (``cmask``) set to 1."""
    D: tl.constexpr = 1 << K
    b = tl.program_id(1).to(tl.int64)
    base = x_ptr + b * 2 * N
    r = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R).to(tl.int64)
    i = tl.arange(0, D)
    coff = tl.zeros((D,), tl.int64)
    for j in tl.static_range(K):
        coff += ((i >> (K - 1 - j)) & 1).to(tl.int64) << tl.load(tpos_ptr + j).to(tl.int64)
    off = (_spread(r, sorted_ptr, NF) | cmask)[:, None] + coff[None, :]
    mask = (r < (N >> NF))[:, None] & (coff >= 0)[None, :]
    re = tl.load(base + off * ZS, mask=mask, other=0.0)
    im = tl.load(base + PS + off * ZS, mask=mask, other=0.0)
    m = mat_ptr + b * mat_bstride + i[:, None] * D + i[None, :]
    mr = tl.load(m)[None, :, :]
    mi = tl.load(m + D * D)[None, :, :]
    ar = re[:, None, :]
    ai = im[:, None, :]
    out_r = tl.sum(mr * ar - mi * ai, axis=2)
    out_i = tl.sum(mr * ai + mi * ar, axis=2)
    tl.store(base + off * ZS, out_r, mask=mask)
    tl.store(base + PS + off * ZS, out_i, mask=mask)


@triton.jit
def diag_kernel(x_ptr, N, PS, pos_ptr, d_ptr, d_bstride, K: tl.constexpr, BLOCK: tl.constexpr,
                ZS: tl.constexpr):
    """Multiply by a diagonal ``(2, 2**K)`` over the bits at ``pos_ptr`` (first = most significant)."""
    b = tl.program_id(1).to(tl.int64)
    base = x_ptr + b * 2 * N
    z = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = z < N
    k = tl.zeros((BLOCK,), tl.int64)
    for j in tl.static_range(K):
        k += ((z >> tl.load(pos_ptr + j).to(tl.int64)) & 1) << (K - 1 - j)
    d = d_ptr + b * d_bstride
    dr = tl.load(d + k, mask=mask, other=0.0)
    di = tl.load(d + (1 << K) + k, mask=mask, other=0.0)
    re = tl.load(base + z * ZS, mask=mask, other=0.0)
    im = tl.load(base + PS + z * ZS, mask=mask, other=0.0)
    tl.store(base + z * ZS, re * dr - im * di, mask=mask)
    tl.store(base + PS + z * ZS, re * di + im * dr, mask=mask)


@triton.jit
def _parity(v):
    v ^= v >> 32
    v ^= v >> 16
    v ^= v >> 8
    v ^= v >> 4
    v ^= v >> 2
    v ^= v >> 1
    return v & 1


@triton.jit
def _weight(z, mask, w_ptr, w_index_ptr, w_shift, W: tl.constexpr, BLOCK: tl.constexpr):
    """The float64 weight of each amplitude ``z`` (see the W_* modes)."""
    if W == 1:
        w = tl.load(w_ptr + z, mask=mask, other=0.0).to(tl.float64)
    elif W == 2:
        k = tl.load(w_index_ptr + z, mask=mask, other=0).to(tl.int64) + w_shift
        w = tl.load(w_ptr + k, mask=mask, other=0.0).to(tl.float64)
    elif W == 3:
        w = tl.zeros((BLOCK,), tl.float64)
        for term in range(w_shift):
            coeff = tl.load(w_ptr + term).to(tl.float64)
            sign = 1 - 2 * _parity(z & tl.load(w_index_ptr + term).to(tl.int64))
            w += coeff * sign.to(tl.float64)
    else:
        w = tl.full((BLOCK,), 1.0, tl.float64)
    return w


@triton.jit
def reduce_kernel(a_ptr, b_ptr, N, PS, w_ptr, w_index_ptr, w_shift, out_ptr, P, W: tl.constexpr,
                  INNER: tl.constexpr, BLOCK: tl.constexpr, ZS: tl.constexpr):
    """Per tile: ``sum w |a|^2`` (INNER false) or ``sum w conj(a) b`` (re, im) into
    ``out[(row * P + tile) * 2 + {0, 1}]`` (float64)."""
    row = tl.program_id(1).to(tl.int64)
    tile = tl.program_id(0).to(tl.int64)
    z = tile * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = z < N
    w = _weight(z, mask, w_ptr, w_index_ptr, w_shift, W, BLOCK)
    ar = tl.load(a_ptr + row * 2 * N + z * ZS, mask=mask, other=0.0).to(tl.float64)
    ai = tl.load(a_ptr + row * 2 * N + PS + z * ZS, mask=mask, other=0.0).to(tl.float64)
    if INNER:
        br = tl.load(b_ptr + row * 2 * N + z * ZS, mask=mask, other=0.0).to(tl.float64)
        bi = tl.load(b_ptr + row * 2 * N + PS + z * ZS, mask=mask, other=0.0).to(tl.float64)
        sr = tl.sum(w * (ar * br + ai * bi), axis=0)
        si = tl.sum(w * (ar * bi - ai * br), axis=0)
    else:
        sr = tl.sum(w * (ar * ar + ai * ai), axis=0)
        si = sr * 0.0
    tl.store(out_ptr + (row * P + tile) * 2, sr)
    tl.store(out_ptr + (row * P + tile) * 2 + 1, si)


@triton.jit
def scale_kernel(a_ptr, out_ptr, N, PS, w_ptr, w_index_ptr, w_shift, W: tl.constexpr, BLOCK: tl.constexpr,
                 ZS: tl.constexpr):
    """``out = w * a`` per amplitude (both planar, same shape)."""
    row = tl.program_id(1).to(tl.int64)
    z = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = z < N
    w = _weight(z, mask, w_ptr, w_index_ptr, w_shift, W, BLOCK).to(out_ptr.dtype.element_ty)
    ar = tl.load(a_ptr + row * 2 * N + z * ZS, mask=mask, other=0.0)
    ai = tl.load(a_ptr + row * 2 * N + PS + z * ZS, mask=mask, other=0.0)
    tl.store(out_ptr + row * 2 * N + z * ZS, w * ar, mask=mask)
    tl.store(out_ptr + row * 2 * N + PS + z * ZS, w * ai, mask=mask)


__all__ = ["pass_kernel", "dense_kernel", "diag_kernel", "reduce_kernel", "scale_kernel", "triton"]
