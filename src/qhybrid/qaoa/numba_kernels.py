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

Butterflies and tile copies are :mod:`qhybrid.sim.walsh`'s (on the float view
of the complex array, re/im interleaved, so the inner loops are contiguous and
vectorise). Kernels trust their inputs.

Threads: every kernel is compiled serial and releases the GIL; :func:`launch` runs it on
:mod:`qhybrid.sim.pool`'s Python threads, each call taking the next block (low pass) or tile
(high pass) from a shared counter (:func:`qhybrid.sim.jit.claim`) until none is left, and
thread ``slot`` using its own row of ``scratch`` and of a high pass's ``acc``. A serial
kernel compiles in about a third of the CPU time of its ``prange`` twin (which compiles the
linked butterfly chains once more for its threaded body), and the shared counter lets a
thread that shares its core with a busy process do fewer blocks instead of holding up the
pass. The trailing ``counter, slot`` of each kernel are that schedule's.
"""
from __future__ import annotations

import numpy as np

from qhybrid.sim.jit import claim, njit, num_threads  # noqa: F401  (num_threads: the layout's)
from qhybrid.sim.pool import run_parts
from qhybrid.sim.walsh import call_at as _call
from qhybrid.sim.walsh import pointer as _ptr
from qhybrid.sim.walsh import tile_in as _tile_in
from qhybrid.sim.walsh import tile_out as _tile_out

_OPTS = dict(fastmath=True, cache=True, nogil=True)
_ZERO = np.int64(0)


def launch(kernel, *args, threads: int, counter: np.ndarray) -> None:
    """``kernel(*args, counter, slot)`` on ``threads`` threads at once (slots ``0..threads-1``;
    the first on this thread), the shared ``counter`` (int64, one element) reset first. The last
    of ``args`` is every kernel's ``wht``, the address :func:`qhybrid.sim.walsh.butterflies`
    gives for the state's float dtype."""
    counter[0] = 0
    if threads == 1:
        kernel(*args, counter, 0)
    else:
        run_parts(kernel, [(*args, counter, slot) for slot in range(threads)])


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


@njit(**_OPTS)
def fwd_low(psi, psf, k, first, index, levels, table, direct, gamma, amp, store, keep, wht, counter, slot):
    """Low pass of the forward sweep: [finish previous mixer], cost phase, start next mixer. With
    ``keep`` (not on the first layer) psi after the phase is also written to ``store``."""
    bs = 1 << k
    nblocks = psi.shape[0] >> k
    while True:
        b = claim(counter)
        if b >= nblocks:
            break
        base = b * bs
        ub = np.uint64(base)
        if first:
            for j in range(np.uint64(bs)):
                psi[ub + j] = amp * _phase_at(ub + j, index, levels, table, direct, gamma)
        elif keep:
            _call(wht, _ptr(psf), 2 * base, 2 * bs, _ZERO, _ZERO)
            for j in range(np.uint64(bs)):
                v = psi[ub + j] * _phase_at(ub + j, index, levels, table, direct, gamma)
                psi[ub + j] = v
                store[ub + j] = v
        else:
            _call(wht, _ptr(psf), 2 * base, 2 * bs, _ZERO, _ZERO)
            for j in range(np.uint64(bs)):
                psi[ub + j] *= _phase_at(ub + j, index, levels, table, direct, gamma)
        _call(wht, _ptr(psf), 2 * base, 2 * bs, _ZERO, _ZERO)


#: fwd_last_low modes: the energy alone; lam = C psi and both un-applies started; lam's alone
ENERGY, BOTH, LAM_ONLY = 0, 1, 2


@njit(**_OPTS)
def fwd_last_low(psi, psf, lam, laf, k, index, levels, direct, mode, acc, wht, counter, slot):
    """Finish the last mixer; acc[b] = sum C |psi|^2 per block; unless ``mode`` is ENERGY, lam = C psi
    and the un-apply starts (on psi and lam for BOTH, on lam alone for LAM_ONLY)."""
    bs = 1 << k
    nblocks = psi.shape[0] >> k
    while True:
        b = claim(counter)
        if b >= nblocks:
            break
        base = b * bs
        ub = np.uint64(base)
        _call(wht, _ptr(psf), 2 * base, 2 * bs, _ZERO, _ZERO)
        s = 0.0
        if mode == ENERGY:
            for j in range(np.uint64(bs)):
                v = psi[ub + j]
                s += _cost_at(ub + j, index, levels, direct) * (v.real * v.real + v.imag * v.imag)
        else:
            for j in range(np.uint64(bs)):
                v = psi[ub + j]
                c = _cost_at(ub + j, index, levels, direct)
                s += c * (v.real * v.real + v.imag * v.imag)
                lam[ub + j] = c * v
            if mode == BOTH:
                _call(wht, _ptr(psf), 2 * base, 2 * bs, _ZERO, _ZERO)
            _call(wht, _ptr(laf), 2 * base, 2 * bs, _ZERO, _ZERO)
        acc[b] = s


@njit(**_OPTS)
def fwd_high(psi, psf, k, w, dh, dl, pr, scratch, scratchf, store, keep, wht, counter, slot):
    """High pass of the forward mixer: high butterflies, D' = dh[r] dl[pr[r], c], high butterflies.
    With ``keep`` the post-D' Hadamard-basis tile is also written to ``store`` (tile-major: tile t
    occupies ``store[t*rows*w:(t+1)*rows*w]``, rows of ``w``, written and read contiguously)."""
    bs = 1 << k
    rows = psi.shape[0] >> k
    ntiles = bs // w
    buf = scratch[slot, 0]
    bf = scratchf[slot, 0]
    while True:
        tile = claim(counter)
        if tile >= ntiles:
            break
        c0 = tile * w
        _tile_in(psf, bf, rows, bs, c0, w)
        _call(wht, _ptr(bf), _ZERO, 2 * rows * w, 2 * w, 2 * rows * w)
        for r in range(rows):
            d = dh[r]
            dlr = dl[pr[r], c0:c0 + w]
            row = buf[r * w:(r + 1) * w]
            if keep:
                t0 = tile * rows * w + r * w
                out = store[t0:t0 + w]
                for c in range(w):
                    v = row[c] * (d * dlr[c])
                    row[c] = v
                    out[c] = v
            else:
                for c in range(w):
                    row[c] *= d * dlr[c]
        _call(wht, _ptr(bf), _ZERO, 2 * rows * w, 2 * w, 2 * rows * w)
        _tile_out(bf, psf, rows, bs, c0, w)


@njit(**_OPTS)
def bwd_high(psi, psf, lam, laf, k, w, dhc, dlc, zh, zl, pr, scratch, scratchf, acc, wht, counter, slot):
    """High pass of the mixer un-apply on psi and lam: acc[slot] = sum conj(lam) zsum psi in the Hadamard basis."""
    bs = 1 << k
    rows = psi.shape[0] >> k
    ntiles = bs // w
    bp = scratch[slot, 0]
    bl = scratch[slot, 1]
    fp = scratchf[slot, 0]
    fl = scratchf[slot, 1]
    s = 0.0
    while True:
        tile = claim(counter)
        if tile >= ntiles:
            break
        c0 = tile * w
        _tile_in(psf, fp, rows, bs, c0, w)
        _tile_in(laf, fl, rows, bs, c0, w)
        _call(wht, _ptr(fp), _ZERO, 2 * rows * w, 2 * w, 2 * rows * w)
        _call(wht, _ptr(fl), _ZERO, 2 * rows * w, 2 * w, 2 * rows * w)
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
        _call(wht, _ptr(fp), _ZERO, 2 * rows * w, 2 * w, 2 * rows * w)
        _call(wht, _ptr(fl), _ZERO, 2 * rows * w, 2 * w, 2 * rows * w)
        _tile_out(fp, psf, rows, bs, c0, w)
        _tile_out(fl, laf, rows, bs, c0, w)
    acc[slot] = s


@njit(**_OPTS)
def bwd_low(psi, psf, lam, laf, k, index, levels, table, direct, gamma, more, acc, wht, counter, slot):
    """Low pass of the un-apply: finish the mixer, acc[b] = Im sum C conj(lam) psi;
    with ``more``: un-apply the cost phase (``table`` holds conj phases) and start the previous mixer."""
    bs = 1 << k
    nblocks = psi.shape[0] >> k
    while True:
        b = claim(counter)
        if b >= nblocks:
            break
        base = b * bs
        ub = np.uint64(base)
        _call(wht, _ptr(psf), 2 * base, 2 * bs, _ZERO, _ZERO)
        _call(wht, _ptr(laf), 2 * base, 2 * bs, _ZERO, _ZERO)
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
            _call(wht, _ptr(psf), 2 * base, 2 * bs, _ZERO, _ZERO)
            _call(wht, _ptr(laf), 2 * base, 2 * bs, _ZERO, _ZERO)


@njit(**_OPTS)
def bwd_high_stored(lam, laf, k, w, dhc, dlc, zh, zl, pr, stored, scratch, scratchf, acc, wht, counter, slot):
    """High pass of the mixer un-apply on lam alone: acc[slot] = sum zsum Im(conj(lam) psi_hat), where
    ``stored`` holds the forward post-D' Hadamard-basis state psi_hat (tile-major, as written by
    :func:`fwd_high_store`)."""
    bs = 1 << k
    rows = lam.shape[0] >> k
    ntiles = bs // w
    bl = scratch[slot, 0]
    fl = scratchf[slot, 0]
    s = 0.0
    while True:
        tile = claim(counter)
        if tile >= ntiles:
            break
        c0 = tile * w
        _tile_in(laf, fl, rows, bs, c0, w)
        _call(wht, _ptr(fl), _ZERO, 2 * rows * w, 2 * w, 2 * rows * w)
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
        _call(wht, _ptr(fl), _ZERO, 2 * rows * w, 2 * w, 2 * rows * w)
        _tile_out(fl, laf, rows, bs, c0, w)
    acc[slot] = s


@njit(**_OPTS)
def bwd_low_stored(lam, laf, k, index, levels, table, direct, gamma, more, first, stored, amp, acc, wht, counter, slot):
    """Low pass of the un-apply on lam alone: acc[b] = sum C Im(conj(lam) psi_pc) with psi_pc the
    forward state after the cost phase (``stored``, or ``amp * phase`` for the first layer);
    with ``more``: un-apply the phase (``table`` holds conj phases) and start the previous mixer."""
    bs = 1 << k
    nblocks = lam.shape[0] >> k
    while True:
        b = claim(counter)
        if b >= nblocks:
            break
        base = b * bs
        ub = np.uint64(base)
        _call(wht, _ptr(laf), 2 * base, 2 * bs, _ZERO, _ZERO)
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
            _call(wht, _ptr(laf), 2 * base, 2 * bs, _ZERO, _ZERO)
