"""The two-state pass (``@triton.jit``) of the QAOA adjoint sweep, on planes as in :mod:`.kernels`.

:func:`pair_kernel` is :func:`~.kernels.pass_kernel` on ``psi`` (``x``) and ``lambda`` (``y``) at
once, with a reduction between its first stage and its diagonal: butterflies (or nothing) on
both, then ``sum w conj(y) x`` (an adjoint gradient's inner product) or ``sum w |x|^2`` (the
energy; ``y = w x`` may then be made there instead of read), then the diagonal on both, then
butterflies on both, then both stored (or nothing stored: the sweep's last pass only reads).
One such pass replaces two state passes and an inner product's read of both states.
"""
from __future__ import annotations

import triton
import triton.language as tl

from .kernels import _spread, _stage, _weight


@triton.jit
def pair_kernel(x_ptr, y_ptr, N, PS, pos_ptr, sorted_ptr, index_ptr, shift, lut_ptr, lut_len, scal_ptr,
                w_ptr, w_index_ptr, w_shift, part_ptr, tiles_n, G: tl.constexpr, BLOCK_R: tl.constexpr,
                PRE: tl.constexpr, DIAG: tl.constexpr, POST: tl.constexpr, Y: tl.constexpr, RED: tl.constexpr,
                W: tl.constexpr, STORE: tl.constexpr, ZS: tl.constexpr):
    """Over the ``G`` bits at ``pos_ptr``: PRE (0 / 1 butterflies) on ``x`` and ``y`` (``Y``: 0 none, 1
    read, 2 made ``= w x`` after the reduction) -> ``RED`` (0 none, 1 ``sum w conj(y) x``, 2 ``sum w
    |x|^2``) into ``part[(b * tiles_n + tile) * 2 + {0, 1}]`` (float64) -> DIAG (as ``pass_kernel``:
    1 ``lut[index[z] + shift]``, 2 ``exp(-i scal[0] index[z])``) -> POST -> stored if ``STORE``."""
    T: tl.constexpr = BLOCK_R << G
    b = tl.program_id(1).to(tl.int64)
    tile = tl.program_id(0).to(tl.int64)
    t = tl.arange(0, T)
    r = tile * BLOCK_R + (t >> G).to(tl.int64)
    c = t & ((1 << G) - 1)
    off = _spread(r, sorted_ptr, G)
    for j in tl.static_range(G):
        off += ((c >> j) & 1).to(tl.int64) << tl.load(pos_ptr + j).to(tl.int64)
    mask = r < (N >> G)
    xb = x_ptr + b * 2 * N
    yb = y_ptr + b * 2 * N
    xr = tl.load(xb + off * ZS, mask=mask, other=0.0)
    xi = tl.load(xb + PS + off * ZS, mask=mask, other=0.0)
    xr, xi = _stage(xr, xi, x_ptr, T, G, PRE)
    if Y == 1:
        yr = tl.load(yb + off * ZS, mask=mask, other=0.0)
        yi = tl.load(yb + PS + off * ZS, mask=mask, other=0.0)
        yr, yi = _stage(yr, yi, x_ptr, T, G, PRE)
    if RED != 0 or Y == 2:
        w = _weight(off, mask, w_ptr, w_index_ptr, w_shift, W, T)
        if RED == 1:
            sr = tl.sum(w * (yr.to(tl.float64) * xr.to(tl.float64) + yi.to(tl.float64) * xi.to(tl.float64)), axis=0)
            si = tl.sum(w * (yr.to(tl.float64) * xi.to(tl.float64) - yi.to(tl.float64) * xr.to(tl.float64)), axis=0)
        else:
            sr = tl.sum(w * (xr.to(tl.float64) * xr.to(tl.float64) + xi.to(tl.float64) * xi.to(tl.float64)), axis=0)
            si = sr * 0.0
        if RED != 0:
            tl.store(part_ptr + (b * tiles_n + tile) * 2, sr)
            tl.store(part_ptr + (b * tiles_n + tile) * 2 + 1, si)
        if Y == 2:
            yr = w.to(xr.dtype) * xr
            yi = w.to(xr.dtype) * xi
    if DIAG == 1:
        k = tl.load(index_ptr + off, mask=mask, other=0).to(tl.int64) + shift
        dr = tl.load(lut_ptr + k, mask=mask, other=0.0)
        di = tl.load(lut_ptr + lut_len + k, mask=mask, other=0.0)
    elif DIAG == 2:
        ang = tl.load(index_ptr + off, mask=mask, other=0.0).to(tl.float64) * tl.load(scal_ptr)
        dr = tl.cos(ang).to(xr.dtype)
        di = -tl.sin(ang).to(xr.dtype)
    if DIAG != 0:
        xr, xi = xr * dr - xi * di, xr * di + xi * dr
        if Y != 0:
            yr, yi = yr * dr - yi * di, yr * di + yi * dr
    xr, xi = _stage(xr, xi, x_ptr, T, G, POST)
    if Y != 0:
        yr, yi = _stage(yr, yi, x_ptr, T, G, POST)
    if STORE:
        tl.store(xb + off * ZS, xr, mask=mask)
        tl.store(xb + PS + off * ZS, xi, mask=mask)
        if Y != 0:
            tl.store(yb + off * ZS, yr, mask=mask)
            tl.store(yb + PS + off * ZS, yi, mask=mask)


__all__ = ["pair_kernel", "triton"]
