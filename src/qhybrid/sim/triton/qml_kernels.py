"""The QML layer's Triton kernels (``@triton.jit``), on states read as planes as in :mod:`.kernels`.

- :func:`gates_kernel`: a run of 2x2 gates on distinct target bits, each with an optional control
  bit anywhere in the index, in one pass: a tile holds all ``2**G`` values of the targets' bits
  (tile bit ``j`` = gate ``j``'s target) for ``BLOCK_R`` values of the others; gate ``j`` acts
  where its control bit (read from the amplitude's own index) is 1. The forward pass applies the
  gates in order; the adjoint pass (``ADJOINT``) walks them backwards on two states at once:
  ``psi <- U_j^-1 psi``, then the per-tile sums ``sum lam_a conj(psi_c)`` on gate ``j``'s
  pairs (where its control is 1), then ``lam <- U_j^-1 lam`` (the launcher passes the inverses).
- :func:`factor_kernel`: one pass over a state seen as ``(rows, 2**L)`` (``z = row << L | c``):
  writes the product state ``prod_w f_w(z_w)`` (``PRODUCT``), or reduces ``lam`` to the two small
  arrays its factor gradients need, ``s[row] = sum_c lam conj(F_low(c))`` and ``t[c] = sum_row lam
  conj(F_high(row))`` (``F``: products of the factors of the low / high wires).

They trust their inputs (the launchers in :mod:`.qml_ops` make them).
"""
from __future__ import annotations

import triton
import triton.language as tl

from .kernels import _combine, _spread


@triton.jit
def _mat(m, re, im, T: tl.constexpr, J: tl.constexpr):
    """The 2x2 at ``m`` (8 floats) on tile bit ``J`` of every amplitude (masking is the caller's)."""
    return _combine(re, im, tl.load(m), tl.load(m + 1), tl.load(m + 2), tl.load(m + 3), tl.load(m + 4),
                    tl.load(m + 5), tl.load(m + 6), tl.load(m + 7), T, J, 2)


@triton.jit
def _sums(lr, li, pr, pi, on, out, T: tl.constexpr, J: tl.constexpr):
    """``out[2 (2a + c) + {0, 1}] = sum lam_a conj(psi_c)`` (re, im) over the tile's pairs on bit
    ``J`` where ``on`` (float64). (One function, no nested calls: each costs the interpreter dearly.)"""
    inner: tl.constexpr = 1 << J
    outer: tl.constexpr = T // (2 * inner)
    lr = tl.where(on, lr, 0.0).to(tl.float64)
    li = tl.where(on, li, 0.0).to(tl.float64)
    l0r, l1r = tl.split(tl.permute(tl.reshape(lr, (outer, 2, inner)), (0, 2, 1)))
    l0i, l1i = tl.split(tl.permute(tl.reshape(li, (outer, 2, inner)), (0, 2, 1)))
    p0r, p1r = tl.split(tl.permute(tl.reshape(pr.to(tl.float64), (outer, 2, inner)), (0, 2, 1)))
    p0i, p1i = tl.split(tl.permute(tl.reshape(pi.to(tl.float64), (outer, 2, inner)), (0, 2, 1)))
    tl.store(out + 0, tl.sum(tl.sum(l0r * p0r + l0i * p0i, axis=1), axis=0))
    tl.store(out + 1, tl.sum(tl.sum(l0i * p0r - l0r * p0i, axis=1), axis=0))
    tl.store(out + 2, tl.sum(tl.sum(l0r * p1r + l0i * p1i, axis=1), axis=0))
    tl.store(out + 3, tl.sum(tl.sum(l0i * p1r - l0r * p1i, axis=1), axis=0))
    tl.store(out + 4, tl.sum(tl.sum(l1r * p0r + l1i * p0i, axis=1), axis=0))
    tl.store(out + 5, tl.sum(tl.sum(l1i * p0r - l1r * p0i, axis=1), axis=0))
    tl.store(out + 6, tl.sum(tl.sum(l1r * p1r + l1i * p1i, axis=1), axis=0))
    tl.store(out + 7, tl.sum(tl.sum(l1i * p1r - l1r * p1i, axis=1), axis=0))


@triton.jit
def gates_kernel(x_ptr, y_ptr, N, PS, pos_ptr, sorted_ptr, ctrl_ptr, mat_ptr, mat_bstride, part_ptr, tiles_n,
                 G: tl.constexpr, BLOCK_R: tl.constexpr, ADJOINT: tl.constexpr, ZS: tl.constexpr):
    """``G`` gates (gate ``j`` on tile bit ``j`` = index bit ``pos[j]``, control ``ctrl[j]``) on ``x``
    in order; or (``ADJOINT``) backwards on ``x`` (psi) and ``y`` (lambda), the gradient sums of
    gate ``j`` into ``part[((b * tiles_n + tile) * G + j) * 8 + k]`` (float64)."""
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
    re = tl.load(xb + off * ZS, mask=mask, other=0.0)
    im = tl.load(xb + PS + off * ZS, mask=mask, other=0.0)
    m_ptr = mat_ptr + b * mat_bstride
    if ADJOINT:
        yb = y_ptr + b * 2 * N
        lr = tl.load(yb + off * ZS, mask=mask, other=0.0)
        li = tl.load(yb + PS + off * ZS, mask=mask, other=0.0)
        part = part_ptr + (b * tiles_n + tile) * G * 8
        for jj in tl.static_range(G):  # gate G - 1 - jj (a constexpr expression: no name may hold it)
            cb = tl.load(ctrl_ptr + (G - 1 - jj)).to(tl.int64)
            on = (cb < 0) | (((off >> tl.maximum(cb, 0)) & 1) == 1)
            nr, ni = _mat(m_ptr + 8 * (G - 1 - jj), re, im, T, G - 1 - jj)
            re, im = tl.where(on, nr, re), tl.where(on, ni, im)
            _sums(lr, li, re, im, on, part + 8 * (G - 1 - jj), T, G - 1 - jj)
            nr, ni = _mat(m_ptr + 8 * (G - 1 - jj), lr, li, T, G - 1 - jj)
            lr, li = tl.where(on, nr, lr), tl.where(on, ni, li)
        tl.store(yb + off * ZS, lr, mask=mask)
        tl.store(yb + PS + off * ZS, li, mask=mask)
    else:
        for j in tl.static_range(G):
            cb = tl.load(ctrl_ptr + j).to(tl.int64)
            on = (cb < 0) | (((off >> tl.maximum(cb, 0)) & 1) == 1)
            nr, ni = _mat(m_ptr + 8 * j, re, im, T, j)
            re, im = tl.where(on, nr, re), tl.where(on, ni, im)
    tl.store(xb + off * ZS, re, mask=mask)
    tl.store(xb + PS + off * ZS, im, mask=mask)


@triton.jit
def factor_kernel(x_ptr, N, PS, f_ptr, nw, s_ptr, t_ptr, rows, steps, L: tl.constexpr, BLOCK_R: tl.constexpr,
                  PRODUCT: tl.constexpr, ZS: tl.constexpr):
    """``z = row << L | c`` over ``nw`` wires, factors planar float64 ``(B, 2, nw, 2)`` at ``f_ptr``
    (the low ``L`` bits = the last ``L`` wires). Program ``p`` takes rows ``[p * steps * BLOCK_R,
    (p + 1) * steps * BLOCK_R)``. ``PRODUCT``: ``x[z] = F_high(row) F_low(c)``; else ``s[b, row]``
    and the program's ``t[b, p, c]`` partial (float64 pairs) from ``x`` = lambda, factors conjugated."""
    C: tl.constexpr = 1 << L
    b = tl.program_id(1).to(tl.int64)
    pid = tl.program_id(0).to(tl.int64)
    if PRODUCT:
        sign = 1.0
    else:
        sign = -1.0
    fb = f_ptr + b * 4 * nw
    c = tl.arange(0, C).to(tl.int64)
    flr = tl.full((C,), 1.0, tl.float64)
    fli = tl.zeros((C,), tl.float64)
    for j in tl.static_range(L):
        fk = (nw - 1 - j) * 2 + ((c >> j) & 1)
        fr = tl.load(fb + fk)
        fi = tl.load(fb + 2 * nw + fk) * sign
        flr, fli = flr * fr - fli * fi, flr * fi + fli * fr
    accr = tl.zeros((C,), tl.float64)
    acci = tl.zeros((C,), tl.float64)
    xb = x_ptr + b * 2 * N
    for step in range(steps):
        r = (pid * steps + step) * BLOCK_R + tl.arange(0, BLOCK_R).to(tl.int64)
        rmask = r < rows
        fhr = tl.full((BLOCK_R,), 1.0, tl.float64)
        fhi = tl.zeros((BLOCK_R,), tl.float64)
        for h in range(nw - L):
            hk = (nw - L - 1 - h) * 2 + ((r >> h) & 1)
            hr = tl.load(fb + hk, mask=rmask, other=1.0)
            hi = tl.load(fb + 2 * nw + hk, mask=rmask, other=0.0) * sign
            fhr, fhi = fhr * hr - fhi * hi, fhr * hi + fhi * hr
        off = (r << L)[:, None] + c[None, :]
        mask = rmask[:, None] & (c >= 0)[None, :]
        if PRODUCT:
            vr = fhr[:, None] * flr[None, :] - fhi[:, None] * fli[None, :]
            vi = fhr[:, None] * fli[None, :] + fhi[:, None] * flr[None, :]
            tl.store(xb + off * ZS, vr.to(x_ptr.dtype.element_ty), mask=mask)
            tl.store(xb + PS + off * ZS, vi.to(x_ptr.dtype.element_ty), mask=mask)
        else:
            ar = tl.load(xb + off * ZS, mask=mask, other=0.0).to(tl.float64)
            ai = tl.load(xb + PS + off * ZS, mask=mask, other=0.0).to(tl.float64)
            sr = tl.sum(ar * flr[None, :] - ai * fli[None, :], axis=1)
            si = tl.sum(ar * fli[None, :] + ai * flr[None, :], axis=1)
            tl.store(s_ptr + (b * rows + r) * 2, sr, mask=rmask)
            tl.store(s_ptr + (b * rows + r) * 2 + 1, si, mask=rmask)
            accr += tl.sum(ar * fhr[:, None] - ai * fhi[:, None], axis=0)
            acci += tl.sum(ar * fhi[:, None] + ai * fhr[:, None], axis=0)
    if not PRODUCT:
        t = t_ptr + ((b * tl.num_programs(0) + pid) * C + c) * 2
        tl.store(t, accr)
        tl.store(t + 1, acci)


__all__ = ["gates_kernel", "factor_kernel", "triton"]
