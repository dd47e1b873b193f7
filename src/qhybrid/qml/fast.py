"""Numba kernels for the CPU: one pass per gate, one fused pass per adjoint step.

Same conventions as :mod:`qhybrid.qml.adjoint` (``(B, 2**n)`` states, wire 0
the most significant bit) but on numpy views of the torch buffers. A gate on
wire ``w`` acts on bit ``p = n - 1 - w`` of the flat index; the loops run
over the indices with that bit (and a control bit) cleared, innermost over
the bits below the lowest of them, so the inner loop is contiguous.

The backward step does in one sweep what the torch path does in three: it
uncomputes ``psi``, accumulates ``G[a, c] = sum lam_a conj(psi_c)`` and
uncomputes ``lambda``.

Two families: complex kernels on ``(B, 2**n)`` arrays (one call per gate, the
gate's work split across threads: used when the batch is smaller than the
thread count), and *planar* kernels on ``(B, 2, 2**n)`` real arrays (real parts,
then imaginary parts) that run all gates on one sample before the next (the
sample stays in cache; one thread per sample; one call per sweep). numba does
not vectorize complex arithmetic, but it does the planar loops (about 1.6x
faster forward and backward at 12-16 wires); the planar sweep sums with
``fastmath={"reassoc"}``, so its gradient sums may differ from the complex
kernels' in the last bits (1e-14).

Threads: numba's own pool (``numba.set_num_threads``), used only when a
call touches at least ``PARALLEL_MIN`` amplitudes and more than one thread is
allowed; a data-parallel job sets one thread per rank on a 2-core machine.
The kernels trust their inputs. ``available()`` is False when numba is not
installed; the layer then uses the torch kernels.
"""
from __future__ import annotations

import numpy as np

from ..sim.jit import PRANGE_ONLY
from ..sim.jit import numba as nb  # None without numba; sets the kernel cache first

CHUNKS = 8  # tasks per sample when the batch is smaller than this


def available() -> bool:
    """Whether numba is importable."""
    return nb is not None


def _layout(n, control, target, batch):
    """Bit positions and loop sizes for a gate on ``target`` (``control = -1``: none)."""
    tpos = n - 1 - target
    if control < 0:
        lo, hi, free, cbit = tpos, -1, n - 1, 0
    else:
        cpos = n - 1 - control
        lo, hi, free, cbit = min(cpos, tpos), max(cpos, tpos), n - 2, 1 << cpos
    n_outer = 1 << (free - lo)
    chunks = min(n_outer, CHUNKS // batch) if 0 < batch < CHUNKS else 1
    return lo, hi, cbit, 1 << tpos, n_outer, chunks


if nb is not None:

    @nb.njit(inline="always")
    def _base(outer, lo, hi, cbit):
        base = outer << (lo + 1)
        if hi >= 0:
            low = base & ((1 << hi) - 1)
            base = ((base - low) << 1) | low
        return base | cbit

    @nb.njit(inline="always")
    def _apply_task(row, u00, u01, u10, u11, lo, hi, cbit, tbit, start, stop):
        inner = 1 << lo
        for outer in range(start, stop):
            base = _base(outer, lo, hi, cbit)
            for k in range(inner):
                i0 = base | k
                i1 = i0 | tbit
                a0 = row[i0]
                a1 = row[i1]
                row[i0] = u00 * a0 + u01 * a1
                row[i1] = u10 * a0 + u11 * a1

    @nb.njit(inline="always")
    def _adjoint_task(prow, lrow, u00, u01, u10, u11, lo, hi, cbit, tbit, start, stop, acc):
        inner = 1 << lo
        g00 = g01 = g10 = g11 = 0j
        for outer in range(start, stop):
            base = _base(outer, lo, hi, cbit)
            for k in range(inner):
                i0 = base | k
                i1 = i0 | tbit
                a0 = prow[i0]
                a1 = prow[i1]
                p0 = u00 * a0 + u01 * a1
                p1 = u10 * a0 + u11 * a1
                prow[i0] = p0
                prow[i1] = p1
                l0 = lrow[i0]
                l1 = lrow[i1]
                c0 = p0.conjugate()
                c1 = p1.conjugate()
                g00 += l0 * c0
                g01 += l0 * c1
                g10 += l1 * c0
                g11 += l1 * c1
                lrow[i0] = u00 * l0 + u01 * l1
                lrow[i1] = u10 * l0 + u11 * l1
        acc[0] = g00
        acc[1] = g01
        acc[2] = g10
        acc[3] = g11

    @nb.njit(parallel=PRANGE_ONLY, cache=True)
    def _apply_parallel(state, u, lo, hi, cbit, tbit, n_outer, chunks):
        per = n_outer // chunks
        for task in nb.prange(state.shape[0] * chunks):
            start = (task % chunks) * per
            _apply_task(state[task // chunks], u[0, 0], u[0, 1], u[1, 0], u[1, 1],
                        lo, hi, cbit, tbit, start, start + per)

    @nb.njit(cache=True)
    def _apply_serial(state, u, lo, hi, cbit, tbit, n_outer, chunks):
        per = n_outer // chunks
        for task in range(state.shape[0] * chunks):
            start = (task % chunks) * per
            _apply_task(state[task // chunks], u[0, 0], u[0, 1], u[1, 0], u[1, 1],
                        lo, hi, cbit, tbit, start, start + per)

    @nb.njit(parallel=PRANGE_ONLY, cache=True)
    def _adjoint_parallel(psi, lam, u, lo, hi, cbit, tbit, n_outer, chunks, partial):
        per = n_outer // chunks
        for task in nb.prange(psi.shape[0] * chunks):
            start = (task % chunks) * per
            _adjoint_task(psi[task // chunks], lam[task // chunks], u[0, 0], u[0, 1], u[1, 0], u[1, 1],
                          lo, hi, cbit, tbit, start, start + per, partial[task])

    @nb.njit(cache=True)
    def _adjoint_serial(psi, lam, u, lo, hi, cbit, tbit, n_outer, chunks, partial):
        per = n_outer // chunks
        for task in range(psi.shape[0] * chunks):
            start = (task % chunks) * per
            _adjoint_task(psi[task // chunks], lam[task // chunks], u[0, 0], u[0, 1], u[1, 0], u[1, 1],
                          lo, hi, cbit, tbit, start, start + per, partial[task])


    # ---- planar kernels: real and imaginary parts in separate rows, so the
    # contiguous inner loops vectorize (complex scalars do not, in numba)

    from ..sim.fastplanar import add8, pair_apply, pair_runs

    @nb.njit(inline="always")
    def _planar_apply(re, im, u, lo, hi, cbit, tbit, n_outer):
        d = (u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7])
        inner = 1 << lo
        if inner < 4:  # short inner loops: index directly (views cost more than they give)
            for outer in range(n_outer):
                base = _base(outer, lo, hi, cbit)
                for k in range(base, base + inner):
                    pair_apply(re, im, re, im, k, k + tbit, d)
            return
        for outer in range(n_outer):
            base = _base(outer, lo, hi, cbit)
            # separate 1-d views: the loop below vectorizes when inner is long enough
            r0, i0, r1, i1 = pair_runs(re, im, base, tbit, inner)
            for k in range(inner):
                pair_apply(r0, i0, r1, i1, k, k, d)

    @nb.njit(inline="always")
    def _planar_pair(r0, i0, r1, i1, s0, t0, s1, t1, k, j, d):
        """One pair of the adjoint step on planar arrays: psi pair ``(r0[k] + i i0[k],
        r1[j] + i i1[j])`` and lambda pair ``(s0[k] + i t0[k], s1[j] + i t1[j])`` <- ``d``
        times themselves; returns the pair's terms of ``G[a, c] = lam_a conj(psi_c)`` (psi
        after the step, lambda before it)."""
        pair_apply(r0, i0, r1, i1, k, j, d)
        q0r, q0i, q1r, q1i = r0[k], i0[k], r1[j], i1[j]
        b0r, b0i, b1r, b1i = s0[k], t0[k], s1[j], t1[j]
        pair_apply(s0, t0, s1, t1, k, j, d)
        return (b0r * q0r + b0i * q0i, b0i * q0r - b0r * q0i, b0r * q1r + b0i * q1i, b0i * q1r - b0r * q1i,
                b1r * q0r + b1i * q0i, b1i * q0r - b1r * q0i, b1r * q1r + b1i * q1i, b1i * q1r - b1r * q1i)

    @nb.njit(inline="always", fastmath={"reassoc"})
    def _planar_adjoint(pre, pim, lre, lim, d, lo, hi, cbit, tbit, n_outer, acc):
        dd = (d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7])
        inner = 1 << lo
        g = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        if inner < 8:  # short runs: index the rows directly (eight views per run cost more)
            for outer in range(n_outer):
                base = _base(outer, lo, hi, cbit)
                for k in range(base, base + inner):
                    g = add8(g, _planar_pair(pre, pim, pre, pim, lre, lim, lre, lim, k, k + tbit, dd))
        else:
            for outer in range(n_outer):
                base = _base(outer, lo, hi, cbit)
                # separate 1-d views: the loop below vectorizes
                p0r, p0i, p1r, p1i = pair_runs(pre, pim, base, tbit, inner)
                l0r, l0i, l1r, l1i = pair_runs(lre, lim, base, tbit, inner)
                for k in range(inner):
                    g = add8(g, _planar_pair(p0r, p0i, p1r, p1i, l0r, l0i, l1r, l1i, k, k, dd))
        for q in range(4):
            acc[q] = complex(g[2 * q], g[2 * q + 1])

    @nb.njit(inline="always")
    def _planar_run_sample(re, im, mats, lo, hi, cbit, tbit, n_outer):
        for g in range(mats.shape[0]):
            _planar_apply(re, im, mats[g], lo[g], hi[g], cbit[g], tbit[g], n_outer[g])

    @nb.njit(inline="always")
    def _planar_sweep_sample(pre, pim, lre, lim, dags, lo, hi, cbit, tbit, n_outer, acc):
        for g in range(dags.shape[0] - 1, -1, -1):
            _planar_adjoint(pre, pim, lre, lim, dags[g], lo[g], hi[g], cbit[g], tbit[g], n_outer[g], acc[g])

    @nb.njit(parallel=PRANGE_ONLY, cache=True)
    def _planar_run_parallel(planes, mats, lo, hi, cbit, tbit, n_outer):
        for b in nb.prange(planes.shape[0]):
            _planar_run_sample(planes[b, 0], planes[b, 1], mats, lo, hi, cbit, tbit, n_outer)

    @nb.njit(cache=True)
    def _planar_run_serial(planes, mats, lo, hi, cbit, tbit, n_outer):
        for b in range(planes.shape[0]):
            _planar_run_sample(planes[b, 0], planes[b, 1], mats, lo, hi, cbit, tbit, n_outer)

    @nb.njit(parallel=PRANGE_ONLY, cache=True, fastmath={"reassoc"})
    def _planar_sweep_parallel(psi, lam, dags, lo, hi, cbit, tbit, n_outer, partial):
        for b in nb.prange(psi.shape[0]):
            _planar_sweep_sample(psi[b, 0], psi[b, 1], lam[b, 0], lam[b, 1], dags,
                                 lo, hi, cbit, tbit, n_outer, partial[b])

    @nb.njit(cache=True, fastmath={"reassoc"})
    def _planar_sweep_serial(psi, lam, dags, lo, hi, cbit, tbit, n_outer, partial):
        for b in range(psi.shape[0]):
            _planar_sweep_sample(psi[b, 0], psi[b, 1], lam[b, 0], lam[b, 1], dags,
                                 lo, hi, cbit, tbit, n_outer, partial[b])


    @nb.njit(parallel=PRANGE_ONLY, cache=True)
    def _factor_gradients(lam, f, left, out):
        """See :func:`factor_gradients`; ``left`` is scratch ``(B, 2**n)``."""
        n = f.shape[1]
        for b in nb.prange(lam.shape[0]):
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
            t = lam[b].copy()  # the tail: lam contracted with conj f over the wires after i
            for i in range(n - 1, -1, -1):
                off = (1 << i) - 1
                g0 = 0j
                g1 = 0j
                c0 = np.conj(f[b, i, 0])
                c1 = np.conj(f[b, i, 1])
                for x in range(1 << i):
                    l = lb[off + x]
                    t0 = t[2 * x]
                    t1 = t[2 * x + 1]
                    g0 += l * t0
                    g1 += l * t1
                    t[x] = t0 * c0 + t1 * c1
                out[b, i, 0] = 2 * g0
                out[b, i, 1] = 2 * g1

PARALLEL_MIN = 1 << 15  # amplitudes per call below which threads cost more than they give


def _parallel(state: np.ndarray) -> bool:
    return state.size >= PARALLEL_MIN and nb.get_num_threads() > 1


def apply(state: np.ndarray, matrix: np.ndarray, control: int, target: int, n: int) -> None:
    """``state <- matrix`` on ``target`` (on the ``control = 1`` half when ``control >= 0``), in place."""
    lo, hi, cbit, tbit, n_outer, chunks = _layout(n, control, target, state.shape[0])
    kernel = _apply_parallel if _parallel(state) else _apply_serial
    kernel(state, matrix, lo, hi, cbit, tbit, n_outer, chunks)


def adjoint_step(psi: np.ndarray, lam: np.ndarray, matrix: np.ndarray, control: int, target: int,
                 n: int) -> np.ndarray:
    """Uncompute ``matrix`` on ``psi`` and ``lam`` in place; return ``sum_b G[b]`` ``(2, 2)``.

    ``G[b, a, c] = sum lam_a conj(psi_c)`` with ``lam`` after and ``psi`` before the gate.
    """
    lo, hi, cbit, tbit, n_outer, chunks = _layout(n, control, target, psi.shape[0])
    partial = np.empty((psi.shape[0] * chunks, 4), dtype=psi.dtype)
    udag = np.ascontiguousarray(matrix.conj().T)
    kernel = _adjoint_parallel if _parallel(psi) else _adjoint_serial
    kernel(psi, lam, udag, lo, hi, cbit, tbit, n_outer, chunks, partial)
    return partial.sum(axis=0).reshape(2, 2)


_LAYOUTS: dict = {}


def gate_layout(n: int, gates) -> tuple[np.ndarray, ...]:
    """Per-gate loop parameters ``(lo, hi, cbit, tbit, n_outer)`` as int64 arrays (cached)."""
    key = (n, tuple(gates))
    if key not in _LAYOUTS:
        rows = [_layout(n, c, t, CHUNKS)[:5] for c, t in gates]
        _LAYOUTS[key] = tuple(np.array(col, dtype=np.int64) for col in zip(*rows))
    return _LAYOUTS[key]


def by_sample(batch: int) -> bool:
    """Whether to use the planar kernels (whole samples per thread): each thread gets a sample."""
    threads = nb.get_num_threads()
    return threads == 1 or batch >= threads


def run(state: np.ndarray, mats: np.ndarray, gates, n: int) -> None:
    """Apply all ``gates`` (``(control, target)``; matrices ``mats`` ``(G, 2, 2)``) in place, gate by gate."""
    for (control, target), mat in zip(gates, mats):
        apply(state, mat, control, target, n)


def sweep(psi: np.ndarray, lam: np.ndarray, mats: np.ndarray, gates, n: int) -> np.ndarray:
    """The whole adjoint sweep in place, gate by gate; returns ``sum_b G[b]`` per gate, ``(G, 2, 2)``."""
    out = np.empty((len(gates), 2, 2), dtype=psi.dtype)
    for k in range(len(gates) - 1, -1, -1):
        out[k] = adjoint_step(psi, lam, mats[k], gates[k][0], gates[k][1], n)
    return out


def run_planar(planes: np.ndarray, mats: np.ndarray, gates, n: int) -> None:
    """:func:`run` on a planar state ``(B, 2, 2**n)`` (real rows, imaginary rows), sample by sample."""
    layout = gate_layout(n, gates)
    flat = np.ascontiguousarray(mats).view(planes.dtype).reshape(len(gates), 8)
    kernel = _planar_run_parallel if _parallel(planes) else _planar_run_serial
    kernel(planes, flat, *layout)


def sweep_planar(psi: np.ndarray, lam: np.ndarray, mats: np.ndarray, gates, n: int) -> np.ndarray:
    """:func:`sweep` on planar states ``(B, 2, 2**n)``; returns ``sum_b G[b]`` per gate."""
    layout = gate_layout(n, gates)
    dags = np.ascontiguousarray(mats.conj().transpose(0, 2, 1)).view(psi.dtype).reshape(len(gates), 8)
    partial = np.empty((psi.shape[0], len(gates), 4), dtype=np.complex128)
    kernel = _planar_sweep_parallel if _parallel(psi) else _planar_sweep_serial
    kernel(psi, lam, dags, *layout, partial)
    return partial.sum(axis=0).reshape(len(gates), 2, 2)


def factor_gradients(lam: np.ndarray, factors: np.ndarray) -> np.ndarray:
    """``2 sum_z lam[b, z] [z_i = a] prod_{j != i} conj(f[b, j, z_j])`` for every wire ``i``:
    ``(B, n, 2)`` (the torch version is :func:`qhybrid.qml.adjoint.factor_gradients`). One
    pass over ``lam`` per sample: the tail contracted wire by wire from the last, against
    prefix products of the earlier wires' factors."""
    out = np.empty(factors.shape, dtype=lam.dtype)
    left = np.empty(lam.shape, dtype=lam.dtype)
    _factor_gradients(lam, np.ascontiguousarray(factors), left, out)
    return out
