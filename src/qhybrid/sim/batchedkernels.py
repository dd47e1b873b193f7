"""The numba kernels of :mod:`.batched` (the QML layer's batched circuit on planar states).

Each kernel is registered (:mod:`.registry`), compiled serial (size 0) and run on Python threads
by the entry points of :mod:`.batched`, which say what they do; the block layout is
:mod:`.gateblocks`'. Work items (a sample's chunk, row or piece) are taken one by one from a
shared counter (:func:`qhybrid.sim.jit.claim`), so threads sharing one call balance themselves.
They trust their inputs.
"""
from __future__ import annotations

import numpy as np

from .jit import claim, njit
from .registry import register

#: Runs at least this long are read through 1-d views (which vectorize); shorter ones by index.
VIEW_MIN = 8

#: Pairs of amplitudes a work item of :func:`batched_observe` covers.
OBSERVE_PIECE = 1 << 14
#: ... and the run of the second half it copies to (and writes from) a buffer of its own at a time:
#: the halves lie a power of two apart (256 MiB at 26 wires), and two streams that far apart
#: evict each other from L1 on this machine (sim/batched.py, :data:`PLANE_PAD`).
OBSERVE_RUN = 1 << 9


@njit
def _base(outer, lo, hi, cbit):
    """The first index of run ``outer``: ``outer`` spread around bits ``lo`` and ``hi``."""
    base = outer << (lo + 1)
    if hi >= 0:
        low = base & ((1 << hi) - 1)
        base = ((base - low) << 1) | low
    return base | cbit


@njit
def _mul(d, ar, ai, cr, ci):
    """``d @ (a, c)`` for a 2x2 ``d`` given as eight reals (row-major, real then imaginary)."""
    return (d[0] * ar - d[1] * ai + d[2] * cr - d[3] * ci, d[0] * ai + d[1] * ar + d[2] * ci + d[3] * cr,
            d[4] * ar - d[5] * ai + d[6] * cr - d[7] * ci, d[4] * ai + d[5] * ar + d[6] * ci + d[7] * cr)


@njit
def _terms(q0r, q0i, q1r, q1i, b0r, b0i, b1r, b1i):
    """``b_a conj(q_c)`` for a, c in 0, 1 (real and imaginary parts, row-major)."""
    return (b0r * q0r + b0i * q0i, b0i * q0r - b0r * q0i, b0r * q1r + b0i * q1i, b0i * q1r - b0r * q1i,
            b1r * q0r + b1i * q0i, b1i * q0r - b1r * q0i, b1r * q1r + b1i * q1i, b1i * q1r - b1r * q1i)


@njit
def _add8(s, w):
    """Elementwise sum of two 8-tuples (partial sums kept in registers)."""
    return (s[0] + w[0], s[1] + w[1], s[2] + w[2], s[3] + w[3], s[4] + w[4], s[5] + w[5], s[6] + w[6],
            s[7] + w[7])


@njit
def _eight(m, g):
    return (m[g, 0], m[g, 1], m[g, 2], m[g, 3], m[g, 4], m[g, 5], m[g, 6], m[g, 7])




@njit(inline="always")
def _gather(pr, pi, start, offs, W, re, im):
    """Chunk rows ``start + offs[h] + j`` (``j < W``) of planes ``pr``, ``pi`` -> buffers ``re``, ``im``."""
    for h in range(offs.shape[0]):
        p = start + offs[h]
        q = h * W
        for j in range(W):
            re[q + j] = pr[p + j]
            im[q + j] = pi[p + j]


@njit(inline="always")
def _scatter(pr, pi, start, offs, W, re, im):
    """The inverse of :func:`_gather`."""
    for h in range(offs.shape[0]):
        p = start + offs[h]
        q = h * W
        for j in range(W):
            pr[p + j] = re[q + j]
            pi[p + j] = im[q + j]


@njit(inline="always")
def _apply(re, im, d, lo, hi, cbit, t, n_outer):
    """One 2x2 ``d`` (eight reals) on planes ``re``, ``im`` laid out as :class:`~.gateblocks.Layout`."""
    inner = 1 << lo
    for outer in range(n_outer):
        base = _base(outer, lo, hi, cbit)
        if inner >= VIEW_MIN:  # separate 1-d views: this loop vectorizes
            r0 = re[base:base + inner]
            i0 = im[base:base + inner]
            r1 = re[base + t:base + t + inner]
            i1 = im[base + t:base + t + inner]
            for k in range(inner):
                r0[k], i0[k], r1[k], i1[k] = _mul(d, r0[k], i0[k], r1[k], i1[k])
        else:
            for k in range(base, base + inner):
                re[k], im[k], re[k + t], im[k + t] = _mul(d, re[k], im[k], re[k + t], im[k + t])


@njit(inline="always")
def _undo(pre, pim, lre, lim, d, lo, hi, cbit, t, n_outer):
    """One gate of the sweep (``d``: its inverse): undo it on ``psi``, sum ``lam_a conj(psi_c)``
    (``lam`` before and ``psi`` after the undo), undo it on ``lam``; returns the eight sums."""
    inner = 1 << lo
    s = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    for outer in range(n_outer):
        base = _base(outer, lo, hi, cbit)
        if inner >= VIEW_MIN:  # separate 1-d views: this loop vectorizes
            p0r, p0i = pre[base:base + inner], pim[base:base + inner]
            p1r, p1i = pre[base + t:base + t + inner], pim[base + t:base + t + inner]
            l0r, l0i = lre[base:base + inner], lim[base:base + inner]
            l1r, l1i = lre[base + t:base + t + inner], lim[base + t:base + t + inner]
            for k in range(inner):
                a, e, c, f = _mul(d, p0r[k], p0i[k], p1r[k], p1i[k])
                p0r[k], p0i[k], p1r[k], p1i[k] = a, e, c, f
                x, y, u, v = l0r[k], l0i[k], l1r[k], l1i[k]
                s = _add8(s, _terms(a, e, c, f, x, y, u, v))
                l0r[k], l0i[k], l1r[k], l1i[k] = _mul(d, x, y, u, v)
        else:
            for k in range(base, base + inner):
                j = k + t
                a, e, c, f = _mul(d, pre[k], pim[k], pre[j], pim[j])
                pre[k], pim[k], pre[j], pim[j] = a, e, c, f
                x, y, u, v = lre[k], lim[k], lre[j], lim[j]
                s = _add8(s, _terms(a, e, c, f, x, y, u, v))
                lre[k], lim[k], lre[j], lim[j] = _mul(d, x, y, u, v)
    return s


@njit(inline="always")
def _run_chunk(re, im, mats, lo, hi, cbit, tbit, n_outer, ext, start):
    for g in range(mats.shape[0]):
        if start & ext[g] == ext[g]:  # a control outside the block: set on this whole chunk
            _apply(re, im, _eight(mats, g), lo[g], hi[g], cbit[g], tbit[g], n_outer[g])


@njit(inline="always")
def _sweep_chunk(pre, pim, lre, lim, dags, lo, hi, cbit, tbit, n_outer, ext, start, acc):
    for g in range(dags.shape[0] - 1, -1, -1):
        if start & ext[g] == ext[g]:
            s = _undo(pre, pim, lre, lim, _eight(dags, g), lo[g], hi[g], cbit[g], tbit[g], n_outer[g])
            for q in range(8):
                acc[g, q] += s[q]


@register
def batched_run(planes, mats, lo, hi, cbit, tbit, n_outer, ext, starts, offs, W, counter):
    """One block's gates (``mats`` ``(G, 8)``: each 2x2 as eight reals; the block's layout, ``ext``,
    chunks as :class:`~qhybrid.sim.gateblocks.Block`) on every sample of ``planes`` ``(B, 2, N)``,
    in place: the work items ``(sample, chunk)`` taken one by one from ``counter``."""
    nchunk = starts.shape[0]
    L = offs.shape[0] * W
    direct = offs.shape[0] == 1
    re = np.empty(0 if direct else L, planes.dtype)
    im = np.empty(0 if direct else L, planes.dtype)
    w = claim(counter)
    while w < planes.shape[0] * nchunk:
        b = w // nchunk
        s = starts[w - b * nchunk]
        pr = planes[b, 0]
        pi = planes[b, 1]
        if direct:
            _run_chunk(pr[s:s + L], pi[s:s + L], mats, lo, hi, cbit, tbit, n_outer, ext, s)
        else:
            _gather(pr, pi, s, offs, W, re, im)
            _run_chunk(re, im, mats, lo, hi, cbit, tbit, n_outer, ext, s)
            _scatter(pr, pi, s, offs, W, re, im)
        w = claim(counter)


@register
def batched_sweep(psi, lam, dags, lo, hi, cbit, tbit, n_outer, ext, starts, offs, W, counter, acc):
    """The adjoint sweep back over one block's gates (``dags``: their inverses as eight reals) on
    planar ``psi`` and ``lam`` ``(B, 2, N)``, in place, chunk by chunk as :func:`batched_run`: per
    gate from the last, undo it on ``psi``, add ``G[a, c] = sum lam_a conj(psi_c)`` (``lam``
    before and ``psi`` after the undo) to ``acc[b, g]`` ``(B, G, 8)`` (G00, G01, G10, G11, real
    and imaginary parts), undo it on ``lam``."""
    nchunk = starts.shape[0]
    L = offs.shape[0] * W
    direct = offs.shape[0] == 1
    n = 0 if direct else L
    kr, ki, lr, li = np.empty(n, psi.dtype), np.empty(n, psi.dtype), np.empty(n, psi.dtype), np.empty(n, psi.dtype)
    w = claim(counter)
    while w < psi.shape[0] * nchunk:
        b = w // nchunk
        s = starts[w - b * nchunk]
        pr, pi, qr, qi = psi[b, 0], psi[b, 1], lam[b, 0], lam[b, 1]
        if direct:
            _sweep_chunk(pr[s:s + L], pi[s:s + L], qr[s:s + L], qi[s:s + L], dags, lo, hi, cbit, tbit, n_outer,
                         ext, s, acc[b])
        else:
            _gather(pr, pi, s, offs, W, kr, ki)
            _gather(qr, qi, s, offs, W, lr, li)
            _sweep_chunk(kr, ki, lr, li, dags, lo, hi, cbit, tbit, n_outer, ext, s, acc[b])
            _scatter(pr, pi, s, offs, W, kr, ki)
            _scatter(qr, qi, s, offs, W, lr, li)
        w = claim(counter)


@njit(inline="always")
def _table(f, w0, w1, out):
    """``out[x] = prod_{w0 <= w < w1} f[w, x_w]`` (wire ``w0`` the most significant bit of ``x``)."""
    out[0] = 1.0
    size = 1
    for w in range(w0, w1):
        f0 = f[w, 0]
        f1 = f[w, 1]
        for x in range(size - 1, -1, -1):
            v = out[x]
            out[2 * x + 1] = v * f1
            out[2 * x] = v * f0
        size *= 2


@register
def batched_product(planes, f, counter):
    """``planes`` ``(B, 2, N)`` <- the product states of the factors ``f`` ``(B, n, 2)`` (wire 0 the
    most significant bit): row ``h`` of the high wires times every column of the low ones, the
    work items ``(sample, row)`` taken one by one from ``counter``."""
    n = f.shape[1]
    high = n // 2
    low = n - high
    rows, cols = 1 << high, 1 << low
    head = np.empty(rows, f.dtype)
    tail = np.empty(cols, f.dtype)
    tr, ti = np.empty(cols, planes.dtype), np.empty(cols, planes.dtype)
    last = -1
    w = claim(counter)
    while w < planes.shape[0] * rows:
        b = w // rows
        h = w - b * rows
        if b != last:
            _table(f[b], 0, high, head)
            _table(f[b], high, n, tail)
            for x in range(cols):
                tr[x] = tail[x].real
                ti[x] = tail[x].imag
            last = b
        hr, hi = head[h].real, head[h].imag
        re = planes[b, 0, h * cols:(h + 1) * cols]
        im = planes[b, 1, h * cols:(h + 1) * cols]
        for x in range(cols):
            re[x] = hr * tr[x] - hi * ti[x]
            im[x] = hr * ti[x] + hi * tr[x]
        w = claim(counter)


@register
def batched_observe(psi, lam, o, half, write, counter, rho):
    """The reduced matrix of wire 0 and, when ``write``, ``lam <- O psi`` (``O`` on wire 0, eight
    reals ``o``) for planar ``psi``, ``lam`` ``(B, 2, M)`` (the states their first ``N = 2 half``
    reals of each plane), in one read of ``psi``: adds
    ``|psi_0|^2, |psi_1|^2, Re and Im sum conj(psi_0) psi_1`` to ``rho[b]`` ``(B, 4)`` (float64),
    pieces of :data:`OBSERVE_PIECE` pairs taken one by one from ``counter``."""
    piece = min(half, OBSERVE_PIECE)
    npiece = half // piece
    run = min(piece, OBSERVE_RUN)
    d = (o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7])
    cr, ci = np.empty(run, psi.dtype), np.empty(run, psi.dtype)  # the second half's run
    tr, ti = np.empty(run, psi.dtype), np.empty(run, psi.dtype)  # lambda's second half, before it is written
    w = claim(counter)
    while w < psi.shape[0] * npiece:
        b = w // npiece
        k0 = (w - b * npiece) * piece
        s00 = s11 = s01r = s01i = 0.0
        for j in range(k0, k0 + piece, run):
            p0r, p0i = psi[b, 0, j:j + run], psi[b, 1, j:j + run]
            p1r, p1i = psi[b, 0, half + j:half + j + run], psi[b, 1, half + j:half + j + run]
            for k in range(run):  # the second half's run, one stream at a time
                cr[k] = p1r[k]
            for k in range(run):
                ci[k] = p1i[k]
            for k in range(run):
                ar, ai, xr, xi = p0r[k], p0i[k], cr[k], ci[k]
                s00 += ar * ar + ai * ai
                s11 += xr * xr + xi * xi
                s01r += ar * xr + ai * xi
                s01i += ar * xi - ai * xr
            if write:
                l0r, l0i = lam[b, 0, j:j + run], lam[b, 1, j:j + run]
                l1r, l1i = lam[b, 0, half + j:half + j + run], lam[b, 1, half + j:half + j + run]
                for k in range(run):
                    l0r[k], l0i[k], tr[k], ti[k] = _mul(d, p0r[k], p0i[k], cr[k], ci[k])
                for k in range(run):
                    l1r[k] = tr[k]
                for k in range(run):
                    l1i[k] = ti[k]
        rho[b, 0] += s00
        rho[b, 1] += s11
        rho[b, 2] += s01r
        rho[b, 3] += s01i
        w = claim(counter)


@register
def batched_factor_gradients(lam, f, left, out):
    """``out[b, i, a] = 2 sum_z lam[b, z] [z_i = a] prod_{j != i} conj(f[b, j, z_j])`` for planar
    ``lam`` ``(B, 2, 2**n)`` and factors ``f`` ``(B, n, 2)``; ``left`` complex scratch ``(B, 2**n)``.
    One pass over ``lam`` per sample: the tail contracted wire by wire from the last, against
    prefix products of the earlier wires' conjugate factors, in place in ``lam`` (whose contents
    it consumes)."""
    n = f.shape[1]
    for b in range(lam.shape[0]):
        lb = left[b]  # left_i at offset 2**i - 1: prod_{j<i} conj f[j, x_j], x over wires < i
        lb[0] = 1.0
        for i in range(n - 1):
            src = (1 << i) - 1
            dst = (2 << i) - 1
            c0 = np.conj(f[b, i, 0])
            c1 = np.conj(f[b, i, 1])
            for x in range(1 << i):
                v = lb[src + x]
                lb[dst + 2 * x] = v * c0
                lb[dst + 2 * x + 1] = v * c1
        tr = lam[b, 0]  # the tail, in place: lam contracted with conj f over the wires after i
        ti = lam[b, 1]
        for i in range(n - 1, -1, -1):
            off = (1 << i) - 1
            g0 = 0j
            g1 = 0j
            c0 = np.conj(f[b, i, 0])
            c1 = np.conj(f[b, i, 1])
            for x in range(1 << i):
                lx = lb[off + x]
                t0 = complex(tr[2 * x], ti[2 * x])
                t1 = complex(tr[2 * x + 1], ti[2 * x + 1])
                g0 += lx * t0
                g1 += lx * t1
                v = t0 * c0 + t1 * c1
                tr[x] = v.real
                ti[x] = v.imag
            out[b, i, 0] = 2 * g0
            out[b, i, 1] = 2 * g1
