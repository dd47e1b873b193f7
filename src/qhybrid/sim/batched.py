"""numba kernels for a batch of states run through one list of 2x2 gates (controlled or not).

The QML layer's circuit (:mod:`qhybrid.qml.adjoint`): every sample of a batch sees the same
gates, so a sample is run through the whole list before the next one, while it sits in
cache. States are *planar*: ``(B, 2, 2**n)`` real arrays (real parts, then imaginary parts),
because numba vectorizes the loops on separate real and imaginary arrays but not on complex
ones (:mod:`.fastplanar` says how much). Wire 0 is the most significant bit; a gate on wire
``w`` acts on bit ``p = n - 1 - w``; a controlled gate only on the control = 1 half.

Gates are given by their loop layout (:func:`layout`): per gate the lower and higher of
its bit positions (``lo``, ``hi``; ``hi = -1`` without a control), the control's bit
``cbit``, the target's ``tbit`` and ``n_outer``, the number of runs of ``2**lo``
contiguous pairs. A call runs gates ``g0 .. g1 - 1`` on part ``part`` of ``nparts`` of each
gate's runs: the whole list on a slice of the batch (one call per thread), or one gate
split between threads (a batch smaller than the thread count).

The kernels are compiled serial only (:func:`qhybrid.sim.registry.kernel` with size 0, which
compiles far faster than ``prange``) and release the GIL; :mod:`.pool` runs them on Python
threads, one slice of the batch each. They trust their inputs.
"""
from __future__ import annotations

import contextlib

import numpy as np

from qhybrid import kernel_cache

from .jit import njit
from .pool import run_parts, slices, threads_for
from .registry import kernel, register

#: Runs at least this long are read through 1-d views (which vectorize); shorter ones by index.
VIEW_MIN = 8


def layout(n: int, gates) -> tuple[np.ndarray, ...]:
    """``(lo, hi, cbit, tbit, n_outer)``, int64 arrays with one entry per ``(control, target)``
    gate (``control = -1``: none) on ``n`` wires."""
    rows = []
    for control, target in gates:
        tpos = n - 1 - target
        if control < 0:
            rows.append((tpos, -1, 0, 1 << tpos, 1 << (n - 1 - tpos)))
            continue
        cpos = n - 1 - control
        lo, hi = min(cpos, tpos), max(cpos, tpos)
        rows.append((lo, hi, 1 << cpos, 1 << tpos, 1 << (n - 2 - lo)))
    return tuple(np.array(col, dtype=np.int64).reshape(len(rows)) for col in zip(*rows)) if rows else \
        tuple(np.zeros(0, dtype=np.int64) for _ in range(5))


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


@register
def batched_run(planes, mats, lo, hi, cbit, tbit, n_outer, g0, g1, part, nparts):
    """Gates ``g0 .. g1 - 1`` (``mats`` ``(G, 8)``: each 2x2 as eight reals) on every sample of
    ``planes`` ``(B, 2, N)``, in place; part ``part`` of ``nparts`` of each gate's runs."""
    for b in range(planes.shape[0]):
        re = planes[b, 0]
        im = planes[b, 1]
        for g in range(g0, g1):
            d = _eight(mats, g)
            inner = 1 << lo[g]
            t = tbit[g]
            for outer in range(n_outer[g] * part // nparts, n_outer[g] * (part + 1) // nparts):
                base = _base(outer, lo[g], hi[g], cbit[g])
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


@register
def batched_sweep(psi, lam, dags, lo, hi, cbit, tbit, n_outer, g0, g1, part, nparts, acc):
    """The adjoint sweep back over gates ``g1 - 1 .. g0`` (``dags``: their inverses as eight reals)
    on planar ``psi`` and ``lam`` ``(B, 2, N)``, in place: undo the gate on ``psi``, add
    ``G[a, c] = sum lam_a conj(psi_c)`` (``lam`` before and ``psi`` after the undo) to
    ``acc[b, g]`` ``(B, G, 8)`` (G00, G01, G10, G11, real and imaginary parts), undo it on
    ``lam``; part ``part`` of ``nparts`` of each gate's runs."""
    for b in range(psi.shape[0]):
        pre = psi[b, 0]
        pim = psi[b, 1]
        lre = lam[b, 0]
        lim = lam[b, 1]
        for g in range(g1 - 1, g0 - 1, -1):
            d = _eight(dags, g)
            inner = 1 << lo[g]
            t = tbit[g]
            s = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
            for outer in range(n_outer[g] * part // nparts, n_outer[g] * (part + 1) // nparts):
                base = _base(outer, lo[g], hi[g], cbit[g])
                if inner >= VIEW_MIN:  # separate 1-d views: this loop vectorizes
                    p0r = pre[base:base + inner]
                    p0i = pim[base:base + inner]
                    p1r = pre[base + t:base + t + inner]
                    p1i = pim[base + t:base + t + inner]
                    l0r = lre[base:base + inner]
                    l0i = lim[base:base + inner]
                    l1r = lre[base + t:base + t + inner]
                    l1i = lim[base + t:base + t + inner]
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
            for q in range(8):
                acc[b, g, q] += s[q]


@register
def batched_factor_gradients(lam, f, left, out):
    """``out[b, i, a] = 2 sum_z lam[b, z] [z_i = a] prod_{j != i} conj(f[b, j, z_j])`` for
    complex ``lam`` ``(B, 2**n)`` and factors ``f`` ``(B, n, 2)``; ``left`` is scratch like
    ``lam``. One pass over ``lam`` per sample: the tail contracted wire by wire from the last,
    against prefix products of the earlier wires' conjugate factors, in place in ``lam`` (whose
    contents it consumes)."""
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
        t = lam[b]  # the tail, in place: lam contracted with conj f over the wires after i
        for i in range(n - 1, -1, -1):
            off = (1 << i) - 1
            g0 = 0j
            g1 = 0j
            c0 = np.conj(f[b, i, 0])
            c1 = np.conj(f[b, i, 1])
            for x in range(1 << i):
                lx = lb[off + x]
                t0 = t[2 * x]
                t1 = t[2 * x + 1]
                g0 += lx * t0
                g1 += lx * t1
                t[x] = t0 * c0 + t1 * c1
            out[b, i, 0] = 2 * g0
            out[b, i, 1] = 2 * g1


# ---- the entry points: planar conversion, and the kernels split over threads (:mod:`.pool`)

#: A batch smaller than the thread count splits each gate between threads from this many
#: amplitudes per state; below it, it runs one sample per thread (a split gate costs a
#: thread hand-off per gate).
GATE_SPLIT_MIN = 1 << 17


#: The kernels the entry points below run, in the order a QML training step first needs them.
KERNELS = ("batched_run", "batched_sweep", "batched_factor_gradients")
_USED: set = set()  # lock names whose kernel this process has called once


def lock_name(name: str, dtype) -> str:
    """The ``kernel_cache.compiling`` name of kernel ``name`` for states of ``dtype`` (a float
    or complex dtype; keyed by the float one): ``batched_run-float64``."""
    return f"{name}-{np.finfo(dtype).dtype.name}"


def _first_use(name: str, dtype):
    """The lock to run kernel ``name``'s first call under (it compiles or loads there), then nothing."""
    lock = lock_name(name, dtype)
    if lock in _USED:
        return contextlib.nullcontext()
    _USED.add(lock)
    return kernel_cache.compiling(lock)


def compile_kernel(name: str, dtype) -> None:
    """Kernel ``name`` of :data:`KERNELS` compiled (or loaded) for states of float ``dtype``, by
    one call through its entry point on a one-sample state of two wires: the argument types of
    every call a QML layer makes (arrays C-contiguous, so a batch or a slice of one shares them)."""
    real = np.dtype(dtype)
    cplx = np.result_type(real, np.complex64)
    if name == "batched_factor_gradients":
        factor_gradients(np.zeros((1, 4), cplx), np.full((1, 2, 2), 0.5, cplx))
        return
    lay = layout(2, [(-1, 0), (0, 1)])
    mats = np.tile(np.eye(2, dtype=cplx), (2, 1, 1))
    planes = np.zeros((1, 2, 4), real)
    if name == "batched_run":
        run(planes, mats, lay)
    elif name == "batched_sweep":
        sweep(planes, planes.copy(), mats, lay)
    else:
        raise ValueError(f"kernel {name!r}: valid are {', '.join(KERNELS)}")


def to_planes(arr: np.ndarray, buf: np.ndarray) -> np.ndarray:
    """Complex ``arr`` ``(B, N)`` copied into the start of ``buf`` (any complex array at least as
    large) as planes ``(B, 2, N)`` of its real dtype."""
    b, size = arr.shape
    planes = buf.reshape(-1).view(arr.real.dtype)[: 2 * b * size].reshape(b, 2, size)
    planes[:, 0] = arr.real
    planes[:, 1] = arr.imag
    return planes


def from_planes(planes: np.ndarray, arr: np.ndarray) -> None:
    """``arr`` ``(B, N)`` complex <- planes ``(B, 2, N)``."""
    arr.real[:] = planes[:, 0]
    arr.imag[:] = planes[:, 1]


def as_reals(mats: np.ndarray, real_dtype) -> np.ndarray:
    """``(G, 2, 2)`` complex matrices as ``(G, 8)`` reals of ``real_dtype`` (the kernels' form)."""
    return np.ascontiguousarray(mats).view(real_dtype).reshape(len(mats), 8)


def _calls(planes, size, gates):
    """``(per-sample slices, parts per gate)``: how a call over ``planes`` is cut for threads."""
    threads = threads_for(size)
    batch = planes.shape[0]
    if batch >= threads or size < GATE_SPLIT_MIN or gates == 0:
        return slices(batch, threads), 1
    return None, threads


def run(planes: np.ndarray, mats: np.ndarray, lay) -> None:
    """Every gate (``mats`` ``(G, 2, 2)`` complex, layout ``lay`` from :func:`layout`) on every
    sample of ``planes`` ``(B, 2, N)``, in place."""
    k = kernel("batched_run", 0)
    d, gates = as_reals(mats, planes.dtype), len(mats)
    parts, split = _calls(planes, planes.shape[0] * planes.shape[2], gates)
    with _first_use("batched_run", planes.dtype):
        if parts is not None:
            run_parts(k, [(planes[s], d, *lay, 0, gates, 0, 1) for s in parts])
            return
        for g in range(gates):
            run_parts(k, [(planes, d, *lay, g, g + 1, p, split) for p in range(split)])


def sweep(psi: np.ndarray, lam: np.ndarray, mats: np.ndarray, lay) -> np.ndarray:
    """The adjoint sweep on planar ``psi``, ``lam`` (in place): every gate undone from the last;
    returns ``G[b]`` per sample and gate, ``(B, G, 2, 2)`` complex128, ``G[a, c] = sum lam_a
    conj(psi_c)`` with ``lam`` after and ``psi`` before the gate."""
    k = kernel("batched_sweep", 0)
    gates = len(mats)
    dags = as_reals(mats.conj().transpose(0, 2, 1), psi.dtype)
    parts, split = _calls(psi, psi.shape[0] * psi.shape[2], gates)
    with _first_use("batched_sweep", psi.dtype):
        if parts is not None:
            acc = np.zeros((psi.shape[0], gates, 8))
            run_parts(k, [(psi[s], lam[s], dags, *lay, 0, gates, 0, 1, acc[s]) for s in parts])
        else:
            acc = np.zeros((split, psi.shape[0], gates, 8))
            for g in range(gates - 1, -1, -1):
                run_parts(k, [(psi, lam, dags, *lay, g, g + 1, p, split, acc[p]) for p in range(split)])
    total = acc if parts is not None else acc.sum(axis=0)
    return (total[..., 0::2] + 1j * total[..., 1::2]).reshape(psi.shape[0], gates, 2, 2)


def factor_gradients(lam: np.ndarray, factors: np.ndarray, left: np.ndarray | None = None) -> np.ndarray:
    """``2 sum_z lam[b, z] [z_i = a] prod_{j != i} conj(f[b, j, z_j])`` for every wire ``i``:
    ``(B, n, 2)``, for complex ``lam`` ``(B, 2**n)`` (consumed: overwritten) and ``factors``
    ``(B, n, 2)``; ``left``: scratch like ``lam`` (a new one when None)."""
    k = kernel("batched_factor_gradients", 0)
    factors = np.ascontiguousarray(factors)
    out = np.empty(factors.shape, dtype=lam.dtype)
    left = np.empty(lam.shape, dtype=lam.dtype) if left is None else left
    with _first_use("batched_factor_gradients", lam.dtype):
        run_parts(k, [(lam[s], factors[s], left[s], out[s]) for s in slices(lam.shape[0], threads_for(lam.size))])
    return out
