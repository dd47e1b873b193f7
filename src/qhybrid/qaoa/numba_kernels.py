"""Fused, cache-blocked numba kernels for the QAOA sweep on CPU.

Same maths as :mod:`qhybrid.qaoa.torch_engine` (the reference they are tested
against), arranged so each pass over a ``2**n`` state does as much as fits in
cache. A basis index ``z`` is split as ``z = r * 2**k + c``:

- a *low pass* walks contiguous blocks of ``2**k`` amplitudes (one per ``r``)
  and applies, in cache, the Walsh–Hadamard butterflies on the ``k`` low bits
  plus the diagonal work that falls between them (cost phase by table lookup,
  energy, cost gradient);
- a *high pass* gathers tiles of ``2**(n-k)`` rows x ``w`` columns into a
  per-thread buffer, applies the butterflies on the high bits, the mixer's
  diagonal ``D'`` (with the beta gradient in the Hadamard basis), the high
  butterflies again, and scatters the tile back.

Butterflies run on the float view of the complex array (re/im interleaved),
radix 4, so the inner loops are contiguous and vectorise. Kernels trust
their inputs.
"""
from __future__ import annotations

import numba as nb
import numpy as np
from numba import njit, prange

_OPTS = dict(fastmath=True, cache=True, nogil=True)


# Butterfly loops index with uint64 (numba wraps negative signed indices: a compare and select
# per access that stops LLVM vectorising) and see the stride as a compile-time constant (one loop
# per power of two, selected by _any8/_any4/_any2): with both, the loops compile to packed
# AVX2/AVX-512 adds without runtime alias checks, about 1.5-2x faster than the slice form.
_U2, _U3, _U4, _U5, _U6, _U7 = (np.uint64(v) for v in range(2, 8))


@njit(inline="always", **_OPTS)
def _pass8(f, start, size, h):
    H = np.uint64(h)
    for i in range(np.uint64(start), np.uint64(start + size), np.uint64(8 * h)):
        for j in range(i, i + H):
            x0 = f[j]
            x1 = f[j + H]
            x2 = f[j + _U2 * H]
            x3 = f[j + _U3 * H]
            x4 = f[j + _U4 * H]
            x5 = f[j + _U5 * H]
            x6 = f[j + _U6 * H]
            x7 = f[j + _U7 * H]
            s0 = x0 + x1
            d0 = x0 - x1
            s1 = x2 + x3
            d1 = x2 - x3
            s2 = x4 + x5
            d2 = x4 - x5
            s3 = x6 + x7
            d3 = x6 - x7
            t0 = s0 + s1
            t1 = d0 + d1
            t2 = s0 - s1
            t3 = d0 - d1
            t4 = s2 + s3
            t5 = d2 + d3
            t6 = s2 - s3
            t7 = d2 - d3
            f[j] = t0 + t4
            f[j + H] = t1 + t5
            f[j + _U2 * H] = t2 + t6
            f[j + _U3 * H] = t3 + t7
            f[j + _U4 * H] = t0 - t4
            f[j + _U5 * H] = t1 - t5
            f[j + _U6 * H] = t2 - t6
            f[j + _U7 * H] = t3 - t7


@njit(inline="always", **_OPTS)
def _pass4(f, start, size, h):
    H = np.uint64(h)
    for i in range(np.uint64(start), np.uint64(start + size), np.uint64(4 * h)):
        for j in range(i, i + H):
            x0 = f[j]
            x1 = f[j + H]
            x2 = f[j + _U2 * H]
            x3 = f[j + _U3 * H]
            s0 = x0 + x1
            d0 = x0 - x1
            s1 = x2 + x3
            d1 = x2 - x3
            f[j] = s0 + s1
            f[j + H] = d0 + d1
            f[j + _U2 * H] = s0 - s1
            f[j + _U3 * H] = d0 - d1


@njit(inline="always", **_OPTS)
def _pass2(f, start, size, h):
    H = np.uint64(h)
    for i in range(np.uint64(start), np.uint64(start + size), np.uint64(2 * h)):
        for j in range(i, i + H):
            x0 = f[j]
            x1 = f[j + H]
            f[j] = x0 + x1
            f[j + H] = x0 - x1


@njit(**_OPTS)
def _any8(f, start, size, h):
    """Radix-8 pass at float stride ``h`` (a power of two, 2..2**22): each stride is its own
    compiled loop, so LLVM sees a constant distance between operands and vectorises without
    runtime alias checks."""
    if h == 2:
        _pass8(f, start, size, 2)
    elif h == 4:
        _pass8(f, start, size, 4)
    elif h == 8:
        _pass8(f, start, size, 8)
    elif h == 16:
        _pass8(f, start, size, 16)
    elif h == 32:
        _pass8(f, start, size, 32)
    elif h == 64:
        _pass8(f, start, size, 64)
    elif h == 128:
        _pass8(f, start, size, 128)
    elif h == 256:
        _pass8(f, start, size, 256)
    elif h == 512:
        _pass8(f, start, size, 512)
    elif h == 1024:
        _pass8(f, start, size, 1024)
    elif h == 2048:
        _pass8(f, start, size, 2048)
    elif h == 4096:
        _pass8(f, start, size, 4096)
    elif h == 8192:
        _pass8(f, start, size, 8192)
    elif h == 16384:
        _pass8(f, start, size, 16384)
    elif h == 32768:
        _pass8(f, start, size, 32768)
    elif h == 65536:
        _pass8(f, start, size, 65536)
    elif h == 131072:
        _pass8(f, start, size, 131072)
    elif h == 262144:
        _pass8(f, start, size, 262144)
    elif h == 524288:
        _pass8(f, start, size, 524288)
    elif h == 1048576:
        _pass8(f, start, size, 1048576)
    elif h == 2097152:
        _pass8(f, start, size, 2097152)
    elif h == 4194304:
        _pass8(f, start, size, 4194304)
    else:
        _pass8(f, start, size, h)


@njit(**_OPTS)
def _any4(f, start, size, h):
    """Radix-4 pass at float stride ``h`` (a power of two, 2..2**22): each stride is its own
    compiled loop, so LLVM sees a constant distance between operands and vectorises without
    runtime alias checks."""
    if h == 2:
        _pass4(f, start, size, 2)
    elif h == 4:
        _pass4(f, start, size, 4)
    elif h == 8:
        _pass4(f, start, size, 8)
    elif h == 16:
        _pass4(f, start, size, 16)
    elif h == 32:
        _pass4(f, start, size, 32)
    elif h == 64:
        _pass4(f, start, size, 64)
    elif h == 128:
        _pass4(f, start, size, 128)
    elif h == 256:
        _pass4(f, start, size, 256)
    elif h == 512:
        _pass4(f, start, size, 512)
    elif h == 1024:
        _pass4(f, start, size, 1024)
    elif h == 2048:
        _pass4(f, start, size, 2048)
    elif h == 4096:
        _pass4(f, start, size, 4096)
    elif h == 8192:
        _pass4(f, start, size, 8192)
    elif h == 16384:
        _pass4(f, start, size, 16384)
    elif h == 32768:
        _pass4(f, start, size, 32768)
    elif h == 65536:
        _pass4(f, start, size, 65536)
    elif h == 131072:
        _pass4(f, start, size, 131072)
    elif h == 262144:
        _pass4(f, start, size, 262144)
    elif h == 524288:
        _pass4(f, start, size, 524288)
    elif h == 1048576:
        _pass4(f, start, size, 1048576)
    elif h == 2097152:
        _pass4(f, start, size, 2097152)
    elif h == 4194304:
        _pass4(f, start, size, 4194304)
    else:
        _pass4(f, start, size, h)


@njit(**_OPTS)
def _any2(f, start, size, h):
    """Radix-2 pass at float stride ``h`` (a power of two, 2..2**22): each stride is its own
    compiled loop, so LLVM sees a constant distance between operands and vectorises without
    runtime alias checks."""
    if h == 2:
        _pass2(f, start, size, 2)
    elif h == 4:
        _pass2(f, start, size, 4)
    elif h == 8:
        _pass2(f, start, size, 8)
    elif h == 16:
        _pass2(f, start, size, 16)
    elif h == 32:
        _pass2(f, start, size, 32)
    elif h == 64:
        _pass2(f, start, size, 64)
    elif h == 128:
        _pass2(f, start, size, 128)
    elif h == 256:
        _pass2(f, start, size, 256)
    elif h == 512:
        _pass2(f, start, size, 512)
    elif h == 1024:
        _pass2(f, start, size, 1024)
    elif h == 2048:
        _pass2(f, start, size, 2048)
    elif h == 4096:
        _pass2(f, start, size, 4096)
    elif h == 8192:
        _pass2(f, start, size, 8192)
    elif h == 16384:
        _pass2(f, start, size, 16384)
    elif h == 32768:
        _pass2(f, start, size, 32768)
    elif h == 65536:
        _pass2(f, start, size, 65536)
    elif h == 131072:
        _pass2(f, start, size, 131072)
    elif h == 262144:
        _pass2(f, start, size, 262144)
    elif h == 524288:
        _pass2(f, start, size, 524288)
    elif h == 1048576:
        _pass2(f, start, size, 1048576)
    elif h == 2097152:
        _pass2(f, start, size, 2097152)
    elif h == 4194304:
        _pass2(f, start, size, 4194304)
    else:
        _pass2(f, start, size, h)


@njit(**_OPTS)
def _wht_range(f, start, size, h0, hmax):
    """Butterflies on float view ``f[start:start+size]`` over float strides ``h0 <= h < hmax``.

    Radix 8, then 4, then 2.
    """
    h = h0
    while 8 * h <= hmax:
        _any8(f, start, size, h)
        h *= 8
    while 4 * h <= hmax:
        _any4(f, start, size, h)
        h *= 4
    while 2 * h <= hmax:
        _any2(f, start, size, h)
        h *= 2


@njit(**_OPTS)
def _wht_low3(f, start, size):
    """Butterflies on complex bits 0..2 (float strides 2, 4, 8): groups of 8 complex in registers."""
    for i in range(start, start + size, 16):
        g = f[i:i + 16]
        for c in range(2):
            x0 = g[c]
            x1 = g[2 + c]
            x2 = g[4 + c]
            x3 = g[6 + c]
            x4 = g[8 + c]
            x5 = g[10 + c]
            x6 = g[12 + c]
            x7 = g[14 + c]
            s0 = x0 + x1
            d0 = x0 - x1
            s1 = x2 + x3
            d1 = x2 - x3
            s2 = x4 + x5
            d2 = x4 - x5
            s3 = x6 + x7
            d3 = x6 - x7
            t0 = s0 + s1
            t1 = d0 + d1
            t2 = s0 - s1
            t3 = d0 - d1
            t4 = s2 + s3
            t5 = d2 + d3
            t6 = s2 - s3
            t7 = d2 - d3
            g[c] = t0 + t4
            g[2 + c] = t1 + t5
            g[4 + c] = t2 + t6
            g[6 + c] = t3 + t7
            g[8 + c] = t0 - t4
            g[10 + c] = t1 - t5
            g[12 + c] = t2 - t6
            g[14 + c] = t3 - t7


_SUB = 2048  # floats per L1 sub-block (16 KiB of float64)


@njit(**_OPTS)
def _wht_block(f, start, size):
    """WHT over all complex bits of the float block ``f[start:start+size]`` (size = 2 * 2**k floats).

    Bits 0..2 in registers, the next bits within L1-sized sub-blocks, the rest across them.
    """
    if size < 16:
        _wht_range(f, start, size, 2, size)
        return
    _wht_low3(f, start, size)
    if size <= _SUB:
        _wht_range(f, start, size, 16, size)
        return
    for s in range(start, start + size, _SUB):
        _wht_range(f, s, _SUB, 16, _SUB)
    _wht_range(f, start, size, _SUB, size)


@njit(**_OPTS)
def _phase_at(z, index, levels, table, direct, gamma):
    if direct:
        v = levels[z]
        return complex(np.cos(gamma * v), -np.sin(gamma * v))
    return table[index[z]]


@njit(**_OPTS)
def _cost_at(z, index, levels, direct):
    if direct:
        return levels[z]
    return levels[index[z]]


@njit(parallel=True, **_OPTS)
def fwd_low(psi, psf, k, first, index, levels, table, direct, gamma, amp):
    """Low pass of the forward sweep: [finish previous mixer], cost phase, start next mixer."""
    bs = 1 << k
    nblocks = psi.shape[0] >> k
    for b in prange(nblocks):
        base = b * bs
        ub = np.uint64(base)
        if first:
            for j in range(np.uint64(bs)):
                psi[ub + j] = amp * _phase_at(ub + j, index, levels, table, direct, gamma)
        else:
            _wht_block(psf, 2 * base, 2 * bs)
            for j in range(np.uint64(bs)):
                psi[ub + j] *= _phase_at(ub + j, index, levels, table, direct, gamma)
        _wht_block(psf, 2 * base, 2 * bs)


@njit(parallel=True, **_OPTS)
def fwd_last_low(psi, psf, lam, laf, k, index, levels, direct, grad, acc):
    """Finish the last mixer; acc[b] = sum C |psi|^2 per block; with grad: lam = C psi, start the un-apply."""
    bs = 1 << k
    nblocks = psi.shape[0] >> k
    for b in prange(nblocks):
        base = b * bs
        ub = np.uint64(base)
        _wht_block(psf, 2 * base, 2 * bs)
        s = 0.0
        for j in range(np.uint64(bs)):
            v = psi[ub + j]
            c = _cost_at(ub + j, index, levels, direct)
            s += c * (v.real * v.real + v.imag * v.imag)
            if grad:
                lam[ub + j] = c * v
        acc[b] = s
        if grad:
            _wht_block(psf, 2 * base, 2 * bs)
            _wht_block(laf, 2 * base, 2 * bs)


@njit(inline="always", **_OPTS)
def _tile_in(src, dst, rows, bs, c0, w):
    """dst[r*w + c] = src[r*bs + c0 + c] on float views (2 floats per amplitude): contiguous runs of 2w."""
    w2 = np.uint64(2 * w)
    for r in range(rows):
        s = np.uint64(2 * (r * bs + c0))
        d = np.uint64(2 * r * w)
        for c in range(w2):
            dst[d + c] = src[s + c]


@njit(inline="always", **_OPTS)
def _tile_out(src, dst, rows, bs, c0, w):
    """dst[r*bs + c0 + c] = src[r*w + c] on float views: the inverse of :func:`_tile_in`."""
    w2 = np.uint64(2 * w)
    for r in range(rows):
        s = np.uint64(2 * r * w)
        d = np.uint64(2 * (r * bs + c0))
        for c in range(w2):
            dst[d + c] = src[s + c]


@njit(parallel=True, **_OPTS)
def fwd_high(psi, psf, k, w, dh, dl, pr, scratch, scratchf):
    """High pass of the forward mixer: high butterflies, D' = dh[r] dl[pr[r], c], high butterflies."""
    bs = 1 << k
    rows = psi.shape[0] >> k
    ntiles = bs // w
    nt = scratch.shape[0]
    for t in prange(nt):
        buf = scratch[t, 0]
        bf = scratchf[t, 0]
        for tile in range(t, ntiles, nt):
            c0 = tile * w
            _tile_in(psf, bf, rows, bs, c0, w)
            _wht_range(bf, 0, 2 * rows * w, 2 * w, 2 * rows * w)
            for r in range(rows):
                d = dh[r]
                dlr = dl[pr[r], c0:c0 + w]
                row = buf[r * w:(r + 1) * w]
                for c in range(w):
                    row[c] *= d * dlr[c]
            _wht_range(bf, 0, 2 * rows * w, 2 * w, 2 * rows * w)
            _tile_out(bf, psf, rows, bs, c0, w)


@njit(parallel=True, **_OPTS)
def bwd_high(psi, psf, lam, laf, k, w, dhc, dlc, zh, zl, pr, scratch, scratchf, acc):
    """High pass of the mixer un-apply on psi and lam: acc[t] += sum conj(lam) zsum psi in the Hadamard basis."""
    bs = 1 << k
    rows = psi.shape[0] >> k
    ntiles = bs // w
    nt = scratch.shape[0]
    for t in prange(nt):
        bp = scratch[t, 0]
        bl = scratch[t, 1]
        fp = scratchf[t, 0]
        fl = scratchf[t, 1]
        s = 0.0
        for tile in range(t, ntiles, nt):
            c0 = tile * w
            _tile_in(psf, fp, rows, bs, c0, w)
            _tile_in(laf, fl, rows, bs, c0, w)
            _wht_range(fp, 0, 2 * rows * w, 2 * w, 2 * rows * w)
            _wht_range(fl, 0, 2 * rows * w, 2 * w, 2 * rows * w)
            for r in range(rows):
                q = pr[r]
                zr = zh[r]
                d = dhc[r]
                for c in range(w):
                    i = r * w + c
                    x = bp[i]
                    y = bl[i]
                    s += (zr + zl[q, c0 + c]) * (y.real * x.imag - y.imag * x.real)
                    dd = d * dlc[q, c0 + c]
                    bp[i] = x * dd
                    bl[i] = y * dd
            _wht_range(fp, 0, 2 * rows * w, 2 * w, 2 * rows * w)
            _wht_range(fl, 0, 2 * rows * w, 2 * w, 2 * rows * w)
            _tile_out(fp, psf, rows, bs, c0, w)
            _tile_out(fl, laf, rows, bs, c0, w)
        acc[t] = s


@njit(parallel=True, **_OPTS)
def bwd_low(psi, psf, lam, laf, k, index, levels, table, direct, gamma, more, acc):
    """Low pass of the un-apply: finish the mixer, acc[b] = Im sum C conj(lam) psi;
    with ``more``: un-apply the cost phase (``table`` holds conj phases) and start the previous mixer."""
    bs = 1 << k
    nblocks = psi.shape[0] >> k
    for b in prange(nblocks):
        base = b * bs
        ub = np.uint64(base)
        _wht_block(psf, 2 * base, 2 * bs)
        _wht_block(laf, 2 * base, 2 * bs)
        s = 0.0
        for j in range(np.uint64(bs)):
            z = ub + j
            x = psi[z]
            y = lam[z]
            s += _cost_at(z, index, levels, direct) * (y.real * x.imag - y.imag * x.real)
            if more:
                ph = _phase_at(z, index, levels, table, direct, gamma)
                psi[z] = x * ph
                lam[z] = y * ph
        acc[b] = s
        if more:
            _wht_block(psf, 2 * base, 2 * bs)
            _wht_block(laf, 2 * base, 2 * bs)


def num_threads() -> int:
    return nb.get_num_threads()


# -- the stored-state variant: the forward sweep keeps what the backward sweep reads ------------
@njit(parallel=True, **_OPTS)
def fwd_low_store(psi, psf, k, index, levels, table, direct, gamma, store):
    """Low pass between layers: finish the mixer, cost phase, keep psi (after the phase) in ``store``,
    start the next mixer."""
    bs = 1 << k
    nblocks = psi.shape[0] >> k
    for b in prange(nblocks):
        base = b * bs
        ub = np.uint64(base)
        _wht_block(psf, 2 * base, 2 * bs)
        for j in range(np.uint64(bs)):
            v = psi[ub + j] * _phase_at(ub + j, index, levels, table, direct, gamma)
            psi[ub + j] = v
            store[ub + j] = v
        _wht_block(psf, 2 * base, 2 * bs)


@njit(parallel=True, **_OPTS)
def fwd_high_store(psi, psf, k, w, dh, dl, pr, scratch, scratchf, store):
    """High pass of the forward mixer that also keeps the post-D' Hadamard-basis tile in ``store``
    (tile-major: tile t occupies ``store[t*rows*w:(t+1)*rows*w]``, rows of ``w``)."""
    bs = 1 << k
    rows = psi.shape[0] >> k
    ntiles = bs // w
    nt = scratch.shape[0]
    for t in prange(nt):
        buf = scratch[t, 0]
        bf = scratchf[t, 0]
        for tile in range(t, ntiles, nt):
            c0 = tile * w
            _tile_in(psf, bf, rows, bs, c0, w)
            _wht_range(bf, 0, 2 * rows * w, 2 * w, 2 * rows * w)
            for r in range(rows):
                d = dh[r]
                dlr = dl[pr[r], c0:c0 + w]
                row = buf[r * w:(r + 1) * w]
                t0 = tile * rows * w + r * w  # the store is tile-major: written and read contiguously
                out = store[t0:t0 + w]
                for c in range(w):
                    v = row[c] * (d * dlr[c])
                    row[c] = v
                    out[c] = v
            _wht_range(bf, 0, 2 * rows * w, 2 * w, 2 * rows * w)
            _tile_out(bf, psf, rows, bs, c0, w)


@njit(parallel=True, **_OPTS)
def fwd_last_low_lam(psi, psf, lam, laf, k, index, levels, direct, acc):
    """Finish the last mixer; acc[b] = sum C |psi|^2; lam = C psi, its low butterflies started."""
    bs = 1 << k
    nblocks = psi.shape[0] >> k
    for b in prange(nblocks):
        base = b * bs
        ub = np.uint64(base)
        _wht_block(psf, 2 * base, 2 * bs)
        s = 0.0
        for j in range(np.uint64(bs)):
            v = psi[ub + j]
            c = _cost_at(ub + j, index, levels, direct)
            s += c * (v.real * v.real + v.imag * v.imag)
            lam[ub + j] = c * v
        acc[b] = s
        _wht_block(laf, 2 * base, 2 * bs)


@njit(parallel=True, **_OPTS)
def bwd_high_stored(lam, laf, k, w, dhc, dlc, zh, zl, pr, stored, scratch, scratchf, acc):
    """High pass of the mixer un-apply on lam alone: acc[t] = sum zsum Im(conj(lam) psi_hat), where
    ``stored`` holds the forward post-D' Hadamard-basis state psi_hat (tile-major, as written by
    :func:`fwd_high_store`)."""
    bs = 1 << k
    rows = lam.shape[0] >> k
    ntiles = bs // w
    nt = scratch.shape[0]
    for t in prange(nt):
        bl = scratch[t, 0]
        fl = scratchf[t, 0]
        s = 0.0
        for tile in range(t, ntiles, nt):
            c0 = tile * w
            _tile_in(laf, fl, rows, bs, c0, w)
            _wht_range(fl, 0, 2 * rows * w, 2 * w, 2 * rows * w)
            for r in range(rows):
                q = pr[r]
                zr = zh[r]
                d = dhc[r]
                zlr = zl[q, c0:c0 + w]
                dlr = dlc[q, c0:c0 + w]
                t0 = tile * rows * w + r * w
                xs = stored[t0:t0 + w]
                row = bl[r * w:(r + 1) * w]
                for c in range(w):
                    x = xs[c]
                    y = row[c]
                    s += (zr + zlr[c]) * (y.real * x.imag - y.imag * x.real)
                    row[c] = y * (d * dlr[c])
            _wht_range(fl, 0, 2 * rows * w, 2 * w, 2 * rows * w)
            _tile_out(fl, laf, rows, bs, c0, w)
        acc[t] = s


@njit(parallel=True, **_OPTS)
def bwd_low_stored(lam, laf, k, index, levels, table, direct, gamma, more, first, stored, amp, acc):
    """Low pass of the un-apply on lam alone: acc[b] = sum C Im(conj(lam) psi_pc) with psi_pc the
    forward state after the cost phase (``stored``, or ``amp * phase`` for the first layer);
    with ``more``: un-apply the phase (``table`` holds conj phases) and start the previous mixer."""
    bs = 1 << k
    nblocks = lam.shape[0] >> k
    for b in prange(nblocks):
        base = b * bs
        ub = np.uint64(base)
        _wht_block(laf, 2 * base, 2 * bs)
        s = 0.0
        for j in range(np.uint64(bs)):
            z = ub + j
            y = lam[z]
            ph = _phase_at(z, index, levels, table, direct, gamma)
            if first:
                x = amp * ph.conjugate()
            else:
                x = stored[z]
            s += _cost_at(z, index, levels, direct) * (y.real * x.imag - y.imag * x.real)
            if more:
                lam[z] = y * ph
        acc[b] = s
        if more:
            _wht_block(laf, 2 * base, 2 * bs)
