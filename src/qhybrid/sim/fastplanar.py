"""numba kernels for runs of 1-qubit gates on split real / imaginary planes, chunk by chunk.

numba does not vectorize complex arithmetic (about 1.2 ns per amplitude per 2x2
gate on these machines, whatever the loop shape); on separate real and imaginary
arrays, with each run of pairs taken as its own 1-d views, the same loop
vectorizes (about 0.35 ns). The states stay interleaved complex everywhere else:
these kernels copy one cache-sized chunk of each state into planes, run every gate
of the layer on it, and copy it back, so the conversion costs one extra pass over
data already in cache.

A chunk is ``nrows`` runs of ``W`` contiguous amplitudes, the ``h``-th at
``start + offs[h]``; in the planes a run is a row (row-major) or a column
(column-major), see :func:`qhybrid.sim.apply.layer_passes`, which also gives each
gate's pairs' distance there (``local``). Distances below 8 run scalar: the passes
are laid out so that no gate has them (above 6 wires).

The kernels trust their inputs; they are compiled serial and threaded through
:func:`qhybrid.sim.registry.kernel`. One worker per thread (the caller passes their
number, :func:`qhybrid.sim.registry.slots`: reading numba's thread count inside a kernel
would stop numba from caching it), each with its own planes, allocated once per
worker; the workers take chunks one at a time from a shared counter
(:func:`qhybrid.sim.jit.claim`), so a thread slowed by another process on its core does
fewer chunks instead of holding up the pass.
"""
from __future__ import annotations

import numpy as np

from .jit import claim, njit, prange  # noqa: F401  (prange: threaded loops once registered)
from .registry import register

#: Strides (inside a chunk) from which a gate's runs are long enough to vectorize.
VECTOR_MIN = 8


@njit(inline="always")
def _bases(row_start, offs, tables, base, lo0):
    """Per row h of a chunk read through ``tables``: ``base[h]`` (the image of the address's
    high digits) and ``lo0[h]`` (its low ten bits); a row's W columns share its 1024-block."""
    for h in range(offs.shape[0]):
        pos = row_start + offs[h]
        lo0[h] = pos & 1023
        base[h] = tables[1, (pos >> 10) & 1023] ^ tables[2, (pos >> 20) & 1023] ^ tables[3, (pos >> 30) & 1023]


@njit(inline="always")
def _load(row, start, offs, W, colmajor, re, im, tables, base, lo0):
    """Chunk -> planes: amplitude ``start + offs[h] + j`` (``j < W``) to plane index ``h W + j``,
    or ``j nrows + h`` when ``colmajor``; read through the index permutation ``tables`` (its four
    ten-bit digit tables, see :func:`qhybrid.sim.fastkernels.permute_into`) when that is
    (4, 1024): ``row[h(start + offs[h] + j)]``."""
    R = offs.shape[0]
    if tables.shape[0] > 0:
        _bases(start, offs, tables, base, lo0)
        t0 = tables[0]
        if colmajor:  # column by column: a row's W values land R apart (one cache set)
            for j in range(W):
                rj = re[j * R:(j + 1) * R]
                ij = im[j * R:(j + 1) * R]
                for h in range(R):
                    v = row[base[h] ^ t0[lo0[h] + j]]
                    rj[h] = v.real
                    ij[h] = v.imag
        else:
            for h in range(R):
                bh = base[h]
                lh = lo0[h]
                rh = re[h * W:(h + 1) * W]
                ih = im[h * W:(h + 1) * W]
                for j in range(W):
                    v = row[bh ^ t0[lh + j]]
                    rh[j] = v.real
                    ih[j] = v.imag
    elif colmajor:
        for j in range(W):
            rj = re[j * R:(j + 1) * R]
            ij = im[j * R:(j + 1) * R]
            for h in range(R):
                v = row[start + offs[h] + j]
                rj[h] = v.real
                ij[h] = v.imag
    else:  # on the float view: the deinterleaving loop vectorizes (complex loads do not)
        flat = row.view(re.dtype)
        for h in range(R):
            p = 2 * (start + offs[h])
            _split(flat[p:p + 2 * W], re[h * W:(h + 1) * W], im[h * W:(h + 1) * W])


@njit(inline="always")
def _split(pairs, re, im):
    """Interleaved (real, imaginary) ``pairs`` -> the planes' runs ``re``, ``im``."""
    for j in range(re.shape[0]):
        re[j] = pairs[2 * j]
        im[j] = pairs[2 * j + 1]


@njit(inline="always")
def _join(pairs, re, im):
    """The planes' runs ``re``, ``im`` -> interleaved ``pairs`` (the inverse of :func:`_split`)."""
    for j in range(re.shape[0]):
        pairs[2 * j] = re[j]
        pairs[2 * j + 1] = im[j]


@njit(inline="always")
def _store(row, start, offs, W, colmajor, re, im):
    """Planes -> chunk (the inverse of :func:`_load` without a permutation)."""
    R = offs.shape[0]
    if colmajor:
        for j in range(W):
            rj = re[j * R:(j + 1) * R]
            ij = im[j * R:(j + 1) * R]
            for h in range(R):
                row[start + offs[h] + j] = complex(rj[h], ij[h])
    else:
        flat = row.view(re.dtype)
        for h in range(R):
            p = 2 * (start + offs[h])
            _join(flat[p:p + 2 * W], re[h * W:(h + 1) * W], im[h * W:(h + 1) * W])


@njit(inline="always")
def _store_through(row, start, offs, W, re, im, tables, base, lo0):
    """Row-major planes -> chunk written through the index permutation ``tables`` ((4, 1024)):
    amplitude ``i = start + offs[h] + j`` to ``row[g(i)]`` (``row`` another buffer than the one read)."""
    _bases(start, offs, tables, base, lo0)
    t0 = tables[0]
    for h in range(offs.shape[0]):
        bh = base[h]
        lh = lo0[h]
        for j in range(W):
            row[bh ^ t0[lh + j]] = complex(re[h * W + j], im[h * W + j])


@njit(inline="always")
def _mat(m):
    """The 2x2 complex ``m`` as eight reals (row-major, real then imaginary)."""
    return (m[0, 0].real, m[0, 0].imag, m[0, 1].real, m[0, 1].imag,
            m[1, 0].real, m[1, 0].imag, m[1, 1].real, m[1, 1].imag)


# The helpers below (pair_apply, pair_runs, add8) are used by the kernels of this module.

@njit(inline="always")
def pair_apply(r0, i0, r1, i1, k, j, d):
    """Pair (plane ``r0/i0`` at ``k``, plane ``r1/i1`` at ``j``) <- ``d`` times itself, ``d`` a
    2x2 as eight reals (see :func:`_mat`)."""
    d00r, d00i, d01r, d01i, d10r, d10i, d11r, d11i = d
    ar, ai, cr, ci = r0[k], i0[k], r1[j], i1[j]
    r0[k] = d00r * ar - d00i * ai + d01r * cr - d01i * ci
    i0[k] = d00r * ai + d00i * ar + d01r * ci + d01i * cr
    r1[j] = d10r * ar - d10i * ai + d11r * cr - d11i * ci
    i1[j] = d10r * ai + d10i * ar + d11r * ci + d11i * cr


@njit(inline="always")
def pair_runs(re, im, base, apart, length):
    """The run of ``length`` pairs at ``base``, partners ``apart`` further, as four 1-d views (first
    and second amplitude of each pair, real and imaginary): loops over separate views vectorize."""
    return (re[base:base + length], im[base:base + length],
            re[base + apart:base + apart + length], im[base + apart:base + apart + length])


@njit(inline="always")
def _gate(re, im, L, s, d):
    """2x2 ``d`` on the pairs ``s`` apart of planes of length ``L``."""
    if s >= VECTOR_MIN:
        for base in range(0, L, 2 * s):
            r0, i0, r1, i1 = pair_runs(re, im, base, s, s)
            for j in range(s):
                pair_apply(r0, i0, r1, i1, j, j, d)
    else:
        for base in range(0, L, 2 * s):
            for k in range(base, base + s):
                pair_apply(re, im, re, im, k, k + s, d)


@njit(inline="always")
def _cross_pair(kr0, ki0, kr1, ki1, br0, bi0, br1, bi1, k, j, d, undo):
    """The pair's terms of ``R[a, b] = ket_a conj(bra_b)`` (R00, R01, R10, R11 as real and
    imaginary parts), then the bra pair <- ``d`` times itself when ``undo``."""
    ar, ai, cr, ci = kr0[k], ki0[k], kr1[j], ki1[j]
    xr, xi, yr, yi = br0[k], bi0[k], br1[j], bi1[j]
    if undo:
        pair_apply(br0, bi0, br1, bi1, k, j, d)
    return (ar * xr + ai * xi, ai * xr - ar * xi, ar * yr + ai * yi, ai * yr - ar * yi,
            cr * xr + ci * xi, ci * xr - cr * xi, cr * yr + ci * yi, ci * yr - cr * yi)


@njit(inline="always")
def add8(g, e):
    """Elementwise sum of two 8-tuples (partial sums carried in registers)."""
    return (g[0] + e[0], g[1] + e[1], g[2] + e[2], g[3] + e[3],
            g[4] + e[4], g[5] + e[5], g[6] + e[6], g[7] + e[7])


@njit(inline="always", fastmath=True)
def _cross(kre, kim, bre, bim, L, s, d, undo):
    """Sum of :func:`_cross_pair` over the pairs ``s`` apart (and the bra's undo)."""
    g = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    if s >= VECTOR_MIN:
        for base in range(0, L, 2 * s):
            kr0, ki0, kr1, ki1 = pair_runs(kre, kim, base, s, s)
            br0, bi0, br1, bi1 = pair_runs(bre, bim, base, s, s)
            for j in range(s):
                g = add8(g, _cross_pair(kr0, ki0, kr1, ki1, br0, bi0, br1, bi1, j, j, d, undo))
    else:
        for base in range(0, L, 2 * s):
            for k in range(base, base + s):
                g = add8(g, _cross_pair(kre, kim, kre, kim, bre, bim, bre, bim, k, k + s, d, undo))
    return g


@njit(inline="always")
def _sizes(local, starts, offs, W, slots):
    """(gates, rows, plane length, chunks, workers): at most ``slots`` workers."""
    nchunk = starts.shape[0]
    return local.shape[0], offs.shape[0], offs.shape[0] * W, nchunk, max(1, min(nchunk, slots))


@register
def apply_layer_planar(state, src, tables, out_tables, mats, local, starts, offs, W, colmajor, slots):
    """2x2 ``mats[r]`` ((R, Bm, 2, 2), distinct wires, in order) on every chunk of each row of
    ``src`` (the same array as ``state``, or another one; read through the index permutation
    ``tables`` when that is (4, 1024)), written to ``state`` (through the permutation
    ``out_tables``, amplitude ``i`` to ``g(i)``, when that is (4, 1024): row-major passes only,
    ``src`` then another array). Chunk c is the amplitudes
    ``starts[c] + offs[h] + j`` (``j < W``), in planes as :func:`_load` lays them out; gate r's
    pairs are ``local[r]`` apart there. At most ``slots`` workers take the chunks one by one
    (see :func:`qhybrid.sim.registry.slots`)."""
    B = state.shape[0]
    R, nrows, L, nchunk, nslot = _sizes(local, starts, offs, W, slots)
    for b in range(B):
        row = state[b]
        srow = src[b]
        bm = b if mats.shape[1] > 1 else 0
        counter = np.zeros(1, dtype=np.int64)
        for sl in prange(nslot):
            re = np.empty(L, srow.real.dtype)  # float32 planes for complex64 states
            im = np.empty(L, srow.real.dtype)
            base = np.empty(nrows, dtype=np.int64)
            lo0 = np.empty(nrows, dtype=np.int64)
            c = claim(counter)
            while c < nchunk:
                _load(srow, starts[c], offs, W, colmajor, re, im, tables, base, lo0)
                for r in range(R):
                    _gate(re, im, L, local[r], _mat(mats[r, bm]))
                if out_tables.shape[0] > 0:
                    _store_through(row, starts[c], offs, W, re, im, out_tables, base, lo0)
                else:
                    _store(row, starts[c], offs, W, colmajor, re, im)
                c = claim(counter)


@register
def adjoint_layer_planar(bras, ket, bras_src, ket_src, tables, invs, local, starts, offs, W, colmajor,
                         slots, undo):
    """The backward step over 1-qubit gates on distinct wires (``invs[r]`` (Bm, 2, 2): the
    inverse of wire r's run of gates), from the last to the first: accumulate the wire's cross
    term ``R[a, b] = sum ket_a conj(bra_m_b)`` over its pairs, then (when ``undo``) apply
    ``invs[r]`` to every bra and to the ket. Returns (M, B, R, 4) complex: R00, R01, R10, R11.
    Chunks and slots as in :func:`apply_layer_planar`; nothing is written back without ``undo``.

    The states are read from ``bras_src`` / ``ket_src`` and written to ``bras`` / ``ket`` (the same
    arrays, or spare ones). With ``tables`` ((4, 1024), else (0, 1024)) they are read through
    that index permutation, ``src[h(j)]``: a CNOT ladder undone on the way in, at no pass of its own."""
    M = bras.shape[0]
    B = ket.shape[0]
    R, nrows, L, nchunk, nslot = _sizes(local, starts, offs, W, slots)
    out = np.zeros((M, B, R, 4), dtype=np.complex128)
    for b in range(B):
        kr = ket[b]
        ks = ket_src[b]
        bm = b if invs.shape[1] > 1 else 0
        part = np.zeros((nslot, M, R, 8))
        counter = np.zeros(1, dtype=np.int64)
        for sl in prange(nslot):
            kp = np.empty((2, L), ks.real.dtype)
            bp = np.empty((M, 2, L), ks.real.dtype)
            base = np.empty(nrows, dtype=np.int64)
            lo0 = np.empty(nrows, dtype=np.int64)
            acc = part[sl]
            c = claim(counter)
            while c < nchunk:
                start = starts[c]
                _load(ks, start, offs, W, colmajor, kp[0], kp[1], tables, base, lo0)
                for m in range(M):
                    _load(bras_src[m, b], start, offs, W, colmajor, bp[m, 0], bp[m, 1], tables, base, lo0)
                for r in range(R - 1, -1, -1):
                    d = _mat(invs[r, bm])
                    for m in range(M):
                        g = _cross(kp[0], kp[1], bp[m, 0], bp[m, 1], L, local[r], d, undo)
                        for q in range(8):
                            acc[m, r, q] += g[q]
                    if undo:
                        _gate(kp[0], kp[1], L, local[r], d)
                if undo:
                    _store(kr, start, offs, W, colmajor, kp[0], kp[1])
                    for m in range(M):
                        _store(bras[m, b], start, offs, W, colmajor, bp[m, 0], bp[m, 1])
                c = claim(counter)
        for sl in range(nslot):
            for m in range(M):
                for r in range(R):
                    for q in range(4):
                        out[m, b, r, q] += complex(part[sl, m, r, 2 * q], part[sl, m, r, 2 * q + 1])
    return out
