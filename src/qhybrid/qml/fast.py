"""Numba kernels for the CPU: one pass per gate, one fused pass per adjoint step.

Same conventions as :mod:`qhybrid.qml.adjoint` (``(B, 2**n)`` states, wire 0
the most significant bit) but on numpy views of the torch buffers. A gate on
wire ``w`` acts on bit ``p = n - 1 - w`` of the flat index; the loops run
over the indices with that bit (and a control bit) cleared, innermost over
the bits below the lowest of them, so the inner loop is contiguous.

The backward step does in one sweep what the torch path does in three: it
uncomputes ``psi``, accumulates ``G[a, c] = sum lam_a conj(psi_c)`` and
uncomputes ``lambda``.

Threads: numba's own pool (``numba.set_num_threads``), used only when a
call touches at least ``PARALLEL_MIN`` amplitudes and more than one thread is
allowed; a data-parallel job sets one thread per rank on a 2-core machine.
The kernels trust their inputs. ``available()`` is False when numba is not
installed; the layer then uses the torch kernels.
"""
from __future__ import annotations

import numpy as np

try:
    import numba as nb
except ImportError:  # pragma: no cover - numba is an optional extra
    nb = None

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

    @nb.njit(parallel=True, cache=True)
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

    @nb.njit(parallel=True, cache=True)
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


    @nb.njit(inline="always")
    def _run_sample(row, mats, lo, hi, cbit, tbit, n_outer):
        for g in range(mats.shape[0]):
            _apply_task(row, mats[g, 0, 0], mats[g, 0, 1], mats[g, 1, 0], mats[g, 1, 1],
                        lo[g], hi[g], cbit[g], tbit[g], 0, n_outer[g])

    @nb.njit(inline="always")
    def _sweep_sample(prow, lrow, dags, lo, hi, cbit, tbit, n_outer, acc):
        for g in range(dags.shape[0] - 1, -1, -1):
            _adjoint_task(prow, lrow, dags[g, 0, 0], dags[g, 0, 1], dags[g, 1, 0], dags[g, 1, 1],
                          lo[g], hi[g], cbit[g], tbit[g], 0, n_outer[g], acc[g])

    @nb.njit(parallel=True, cache=True)
    def _run_parallel(state, mats, lo, hi, cbit, tbit, n_outer):
        for b in nb.prange(state.shape[0]):
            _run_sample(state[b], mats, lo, hi, cbit, tbit, n_outer)

    @nb.njit(cache=True)
    def _run_serial(state, mats, lo, hi, cbit, tbit, n_outer):
        for b in range(state.shape[0]):
            _run_sample(state[b], mats, lo, hi, cbit, tbit, n_outer)

    @nb.njit(parallel=True, cache=True)
    def _sweep_parallel(psi, lam, dags, lo, hi, cbit, tbit, n_outer, partial):
        for b in nb.prange(psi.shape[0]):
            _sweep_sample(psi[b], lam[b], dags, lo, hi, cbit, tbit, n_outer, partial[b])

    @nb.njit(cache=True)
    def _sweep_serial(psi, lam, dags, lo, hi, cbit, tbit, n_outer, partial):
        for b in range(psi.shape[0]):
            _sweep_sample(psi[b], lam[b], dags, lo, hi, cbit, tbit, n_outer, partial[b])


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


def _by_sample(batch: int) -> bool:
    """Whole samples per thread: when every thread gets at least one sample."""
    threads = nb.get_num_threads()
    return threads == 1 or batch >= threads


def run(state: np.ndarray, mats: np.ndarray, gates, n: int) -> None:
    """Apply all ``gates`` (``(control, target)``; matrices ``mats`` ``(G, 2, 2)``) in place.

    Sample by sample (each sample's state stays in cache across the gates, one
    thread per sample) when the batch covers the threads, else gate by gate with
    the work of each gate split across threads.
    """
    if not _by_sample(state.shape[0]):
        for (control, target), mat in zip(gates, mats):
            apply(state, mat, control, target, n)
        return
    layout = gate_layout(n, gates)
    kernel = _run_parallel if _parallel(state) else _run_serial
    kernel(state, np.ascontiguousarray(mats), *layout)


def sweep(psi: np.ndarray, lam: np.ndarray, mats: np.ndarray, gates, n: int) -> np.ndarray:
    """The whole adjoint sweep in place; returns ``sum_b G[b]`` per gate, ``(G, 2, 2)``."""
    if not _by_sample(psi.shape[0]):
        out = np.empty((len(gates), 2, 2), dtype=psi.dtype)
        for k in range(len(gates) - 1, -1, -1):
            out[k] = adjoint_step(psi, lam, mats[k], gates[k][0], gates[k][1], n)
        return out
    layout = gate_layout(n, gates)
    dags = np.ascontiguousarray(mats.conj().transpose(0, 2, 1))
    partial = np.empty((psi.shape[0], len(gates), 4), dtype=psi.dtype)
    kernel = _sweep_parallel if _parallel(psi) else _sweep_serial
    kernel(psi, lam, dags, *layout, partial)
    return partial.sum(axis=0).reshape(len(gates), 2, 2)
