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


@njit(inline="always", **_OPTS)
def _radix8(a0, a1, a2, a3, a4, a5, a6, a7, h):
    for j in range(h):
        x0 = a0[j]
        x1 = a1[j]
        x2 = a2[j]
        x3 = a3[j]
        x4 = a4[j]
        x5 = a5[j]
        x6 = a6[j]
        x7 = a7[j]
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
        a0[j] = t0 + t4
        a1[j] = t1 + t5
        a2[j] = t2 + t6
        a3[j] = t3 + t7
        a4[j] = t0 - t4
        a5[j] = t1 - t5
        a6[j] = t2 - t6
        a7[j] = t3 - t7


@njit(**_OPTS)
def _wht_range(f, start, size, h0, hmax):
    """Butterflies on float view ``f[start:start+size]`` over float strides ``h0 <= h < hmax``.

    Radix 8, then 4, then 2; each group's operands are slices so the inner loop is a
    plain contiguous loop the compiler vectorises.
    """
    h = h0
    while 8 * h <= hmax:
        for i in range(start, start + size, 8 * h):
            _radix8(f[i:i + h], f[i + h:i + 2 * h], f[i + 2 * h:i + 3 * h], f[i + 3 * h:i + 4 * h],
                    f[i + 4 * h:i + 5 * h], f[i + 5 * h:i + 6 * h], f[i + 6 * h:i + 7 * h],
                    f[i + 7 * h:i + 8 * h], h)
        h *= 8
    while 4 * h <= hmax:
        for i in range(start, start + size, 4 * h):
            a0 = f[i:i + h]
            a1 = f[i + h:i + 2 * h]
            a2 = f[i + 2 * h:i + 3 * h]
            a3 = f[i + 3 * h:i + 4 * h]
            for j in range(h):
                x0 = a0[j]
                x1 = a1[j]
                x2 = a2[j]
                x3 = a3[j]
                s0 = x0 + x1
                d0 = x0 - x1
                s1 = x2 + x3
                d1 = x2 - x3
                a0[j] = s0 + s1
                a1[j] = d0 + d1
                a2[j] = s0 - s1
                a3[j] = d0 - d1
        h *= 4
    while 2 * h <= hmax:
        for i in range(start, start + size, 2 * h):
            a0 = f[i:i + h]
            a1 = f[i + h:i + 2 * h]
            for j in range(h):
                x0 = a0[j]
                x1 = a1[j]
                a0[j] = x0 + x1
                a1[j] = x0 - x1
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
        if first:
            for j in range(bs):
                psi[base + j] = amp * _phase_at(base + j, index, levels, table, direct, gamma)
        else:
            _wht_block(psf, 2 * base, 2 * bs)
            for j in range(bs):
                psi[base + j] *= _phase_at(base + j, index, levels, table, direct, gamma)
        _wht_block(psf, 2 * base, 2 * bs)


@njit(parallel=True, **_OPTS)
def fwd_last_low(psi, psf, lam, laf, k, index, levels, direct, grad, acc):
    """Finish the last mixer; acc[b] = sum C |psi|^2 per block; with grad: lam = C psi, start the un-apply."""
    bs = 1 << k
    nblocks = psi.shape[0] >> k
    for b in prange(nblocks):
        base = b * bs
        _wht_block(psf, 2 * base, 2 * bs)
        s = 0.0
        for j in range(bs):
            v = psi[base + j]
            c = _cost_at(base + j, index, levels, direct)
            s += c * (v.real * v.real + v.imag * v.imag)
            if grad:
                lam[base + j] = c * v
        acc[b] = s
        if grad:
            _wht_block(psf, 2 * base, 2 * bs)
            _wht_block(laf, 2 * base, 2 * bs)


@njit(parallel=True, **_OPTS)
def fwd_high(psi, k, w, dh, dl, pr, scratch, scratchf):
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
            for r in range(rows):
                for c in range(w):
                    buf[r * w + c] = psi[r * bs + c0 + c]
            _wht_range(bf, 0, 2 * rows * w, 2 * w, 2 * rows * w)
            for r in range(rows):
                d = dh[r]
                dlr = dl[pr[r], c0:c0 + w]
                row = buf[r * w:(r + 1) * w]
                for c in range(w):
                    row[c] *= d * dlr[c]
            _wht_range(bf, 0, 2 * rows * w, 2 * w, 2 * rows * w)
            for r in range(rows):
                for c in range(w):
                    psi[r * bs + c0 + c] = buf[r * w + c]


@njit(parallel=True, **_OPTS)
def bwd_high(psi, lam, k, w, dhc, dlc, zh, zl, pr, scratch, scratchf, acc):
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
            for r in range(rows):
                for c in range(w):
                    bp[r * w + c] = psi[r * bs + c0 + c]
                    bl[r * w + c] = lam[r * bs + c0 + c]
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
            for r in range(rows):
                for c in range(w):
                    psi[r * bs + c0 + c] = bp[r * w + c]
                    lam[r * bs + c0 + c] = bl[r * w + c]
        acc[t] = s


@njit(parallel=True, **_OPTS)
def bwd_low(psi, psf, lam, laf, k, index, levels, table, direct, gamma, more, acc):
    """Low pass of the un-apply: finish the mixer, acc[b] = Im sum C conj(lam) psi;
    with ``more``: un-apply the cost phase (``table`` holds conj phases) and start the previous mixer."""
    bs = 1 << k
    nblocks = psi.shape[0] >> k
    for b in prange(nblocks):
        base = b * bs
        _wht_block(psf, 2 * base, 2 * bs)
        _wht_block(laf, 2 * base, 2 * bs)
        s = 0.0
        for j in range(bs):
            z = base + j
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
        _wht_block(psf, 2 * base, 2 * bs)
        for j in range(bs):
            v = psi[base + j] * _phase_at(base + j, index, levels, table, direct, gamma)
            psi[base + j] = v
            store[base + j] = v
        _wht_block(psf, 2 * base, 2 * bs)


@njit(parallel=True, **_OPTS)
def fwd_high_store(psi, k, w, dh, dl, pr, scratch, scratchf, store):
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
            for r in range(rows):
                for c in range(w):
                    buf[r * w + c] = psi[r * bs + c0 + c]
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
            for r in range(rows):
                for c in range(w):
                    psi[r * bs + c0 + c] = buf[r * w + c]


@njit(parallel=True, **_OPTS)
def fwd_last_low_lam(psi, psf, lam, laf, k, index, levels, direct, acc):
    """Finish the last mixer; acc[b] = sum C |psi|^2; lam = C psi, its low butterflies started."""
    bs = 1 << k
    nblocks = psi.shape[0] >> k
    for b in prange(nblocks):
        base = b * bs
        _wht_block(psf, 2 * base, 2 * bs)
        s = 0.0
        for j in range(bs):
            v = psi[base + j]
            c = _cost_at(base + j, index, levels, direct)
            s += c * (v.real * v.real + v.imag * v.imag)
            lam[base + j] = c * v
        acc[b] = s
        _wht_block(laf, 2 * base, 2 * bs)


@njit(parallel=True, **_OPTS)
def bwd_high_stored(lam, k, w, dhc, dlc, zh, zl, pr, stored, scratch, scratchf, acc):
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
            for r in range(rows):
                for c in range(w):
                    bl[r * w + c] = lam[r * bs + c0 + c]
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
            for r in range(rows):
                for c in range(w):
                    lam[r * bs + c0 + c] = bl[r * w + c]
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
        _wht_block(laf, 2 * base, 2 * bs)
        s = 0.0
        for j in range(bs):
            z = base + j
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
