"""numba kernels for a batch of states run through one list of 2x2 gates (controlled or not).

The QML layer's circuit (:mod:`qhybrid.qml.adjoint`): every sample of a batch sees the same
gates. States are *planar*: ``(B, 2, M)`` real arrays (real parts, then imaginary parts),
because numba vectorizes the loops on separate real and imaginary arrays but not on complex
ones (:mod:`.fastplanar` says how much). A state is the first ``N = 2**n`` reals of each
plane; large planes carry a small pad after them (:func:`as_planes`, :data:`PLANE_PAD`), so
that no two planes lie a large power of two apart. Wire 0 is the most significant bit; a gate on wire
``w`` acts on bit ``p = n - 1 - w``; a controlled gate only on the control = 1 half.

The gates run in cache blocks (:mod:`.gateblocks`): a block's gates are applied to one chunk
of ``2**BLOCK_BITS`` amplitudes after another (copied into a worker's buffer, or in place when
the chunk is contiguous), so a block costs one read and one write of the state whatever its
gate count. The adjoint sweep does the same with both states. The product state is written
straight into planes (:func:`product`), and ``<O>`` on wire 0 is reduced in the pass that
writes ``lambda = O psi`` (:func:`observe`): a training sample makes no copy of its own.

The kernels are compiled serial only (:func:`qhybrid.sim.registry.kernel` with size 0, which
compiles far faster than ``prange``) and release the GIL; :mod:`.pool` runs them on Python
threads, either one slice of the batch each or, for a batch smaller than the thread count,
all of them on one block, taking its chunks one by one from a shared counter
(:func:`qhybrid.sim.jit.claim`). They trust their inputs.
"""
from __future__ import annotations


import numpy as np

from qhybrid import kernel_cache

from .gateblocks import blocks, layout  # noqa: F401  (layout: the per-gate layout, re-exported)
from .pool import run_parts, slices, threads_for
from .registry import kernel

# ---- the entry points: the kernels split over threads (:mod:`.pool`)

#: A batch smaller than the thread count shares each block's chunks between the threads from
#: this many amplitudes per state; below it, it runs one sample per thread.
SPLIT_MIN = 1 << 17

#: The kernels the entry points below run, in the order a QML training step first needs them.
KERNELS = ("batched_product", "batched_run", "batched_observe", "batched_sweep", "batched_factor_gradients")
_USED: set = set()  # (kernel name, dtype) this process has loaded


def lock_name(name: str, dtype) -> str:
    """The ``kernel_cache.compiling`` name of kernel ``name`` for states of ``dtype`` (a float
    or complex dtype; keyed by the float one): ``batched_run-float64``."""
    return f"{name}-{np.finfo(dtype).dtype.name}"


def _first_use(name: str, dtype) -> None:
    """Kernel ``name`` compiled or loaded for ``dtype``, once a process: by :func:`compile_kernel`'s
    call on a two-wire state under the kernel cache's lock, so the caller's own call then runs
    unlocked (a data-parallel job's ranks wait for each other's compile, never for each other's
    first call on a large state: at 26 wires that call faults gigabytes in)."""
    if (name, dtype) in _USED:  # every kernel call passes here: no lock name formatted
        return
    _USED.add((name, dtype))
    with kernel_cache.compiling(lock_name(name, dtype)):
        compile_kernel(name, dtype)


def compile_kernel(name: str, dtype) -> None:
    """Kernel ``name`` of :data:`KERNELS` compiled (or loaded) for states of float ``dtype``, by
    one call through its entry point on a one-sample state of two wires: the argument types of
    every call a QML layer makes (arrays C-contiguous, so a batch or a slice of one shares them)."""
    real = np.dtype(dtype)
    cplx = np.result_type(real, np.complex64)
    planes, factors = np.zeros((1, 2, 4), real), np.full((1, 2, 2), 0.5, cplx)
    mats = np.tile(np.eye(2, dtype=cplx), (2, 1, 1))
    calls = {"batched_product": lambda: product(planes, factors),
             "batched_run": lambda: run(planes, mats, blocks(2, [(-1, 0), (0, 1)])),
             "batched_observe": lambda: observe(planes, planes.copy(), mats[0]),
             "batched_sweep": lambda: sweep(planes, planes.copy(), mats, blocks(2, [(-1, 0), (0, 1)])),
             "batched_factor_gradients": lambda: factor_gradients(planes, factors, np.zeros((1, 4), cplx))}
    if name not in calls:
        raise ValueError(f"kernel {name!r}: valid are {', '.join(KERNELS)}")
    calls[name]()


#: Bytes of padding after each plane of a large state (4 KiB and a cache line). Two streams a
#: large power of two apart (>= 256 MiB: 25 wires and up in complex128) evict each other from
#: the core's L1 here, and every kernel ran 3.5-5x slower per chunk; 4 KiB + 64 B off they do not
#: (benchmarks/README.md, "26 wires"). The pad also keeps the batch's rows off such strides.
PLANE_PAD = 4096 + 64
#: Planes of fewer bytes than this are not padded (so ``N`` is the largest power of two in a row).
PAD_FROM = 1 << 20


def plane_len(size: int, itemsize: int) -> int:
    """Reals per plane (``size`` amplitudes and the pad) of a planar state whose reals take
    ``itemsize`` bytes: :func:`as_planes`' row length."""
    return size + (PLANE_PAD // itemsize if size * itemsize >= PAD_FROM else 0)


def state_size(planes: np.ndarray) -> int:
    """Amplitudes per plane of planar ``(B, 2, M)`` states: the largest power of two ``N <= M``
    (the kernels read ``[:N]`` of each plane; the rest is :data:`PLANE_PAD`)."""
    return 1 << (planes.shape[2].bit_length() - 1)


def to_planes(arr: np.ndarray, buf: np.ndarray) -> np.ndarray:
    """Complex ``arr`` ``(B, N)`` copied into the start of ``buf`` (any complex array at least as
    large) as planes ``(B, 2, N)`` of its real dtype (not padded)."""
    b, size = arr.shape
    planes = buf.reshape(-1).view(arr.real.dtype)[: 2 * b * size].reshape(b, 2, size)
    planes[:, 0] = arr.real
    planes[:, 1] = arr.imag
    return planes


def as_planes(buf: np.ndarray, b: int, size: int, real) -> np.ndarray:
    """The start of ``buf`` (any contiguous array of at least ``2 b plane_len`` reals' bytes) as
    planes ``(b, 2, plane_len(size))`` of float dtype ``real``: the states, each plane padded."""
    m = plane_len(size, np.dtype(real).itemsize)
    return buf.reshape(-1).view(real)[: 2 * b * m].reshape(b, 2, m)


def from_planes(planes: np.ndarray, arr: np.ndarray) -> None:
    """``arr`` ``(B, N)`` complex <- planes ``(B, 2, M)``, ``M >= N`` (the pad dropped)."""
    arr.real[:] = planes[:, 0, :arr.shape[1]]
    arr.imag[:] = planes[:, 1, :arr.shape[1]]


def as_reals(mats: np.ndarray, real_dtype) -> np.ndarray:
    """``(G, 2, 2)`` complex matrices as ``(G, 8)`` reals of ``real_dtype`` (the kernels' form)."""
    return np.ascontiguousarray(mats).astype(np.result_type(real_dtype, np.complex64)).view(real_dtype).reshape(
        len(mats), 8)


def _calls(planes, size, gates):
    """``(per-sample slices, threads sharing each block)``: how a call over ``planes`` is cut for threads."""
    threads = threads_for(size)
    batch = planes.shape[0]
    if batch >= threads or size < SPLIT_MIN or gates == 0:
        return slices(batch, threads), 1
    return None, threads


def _each(planes, k, args_of, gates=1) -> None:
    """``k(*args_of(rows, counter))`` per slice of the batch on its own thread, or on every thread
    at once over the whole batch sharing one counter (see :func:`_calls`)."""
    parts, split = _calls(planes, planes.shape[0] * planes.shape[2], gates)
    if parts is not None:
        run_parts(k, [args_of(s, np.zeros(1, np.int64)) for s in parts])
    else:
        counter = np.zeros(1, np.int64)
        run_parts(k, [args_of(slice(None), counter)] * split)


def product(planes: np.ndarray, factors: np.ndarray) -> None:
    """``planes`` ``(B, 2, N)`` <- the product states of ``factors`` ``(B, n, 2)`` complex."""
    f = np.ascontiguousarray(factors)
    _first_use("batched_product", planes.dtype)
    _each(planes, kernel("batched_product", 0), lambda s, c: (planes[s], f[s], c))


def run(planes: np.ndarray, mats: np.ndarray, blks) -> None:
    """Every gate (``mats`` ``(G, 2, 2)`` complex, cut into blocks ``blks`` by :func:`blocks`) on
    every sample of ``planes`` ``(B, 2, N)``, in place: a slice of the batch per thread runs every
    block; a smaller batch runs one block at a time on all threads."""
    k = kernel("batched_run", 0)
    d = as_reals(mats, planes.dtype)

    def block(p, blk, c):
        k(p, d[blk.index], *blk.lay, blk.ext, blk.starts, blk.offs, blk.W, c)

    _first_use("batched_run", planes.dtype)
    if _calls(planes, planes.shape[0] * planes.shape[2], len(mats))[0] is not None:
        _each(planes, lambda p: [block(p, blk, np.zeros(1, np.int64)) for blk in blks],
              lambda s, c: (planes[s],), len(mats))
        return
    for blk in blks:
        _each(planes, block, lambda s, c, blk=blk: (planes, blk, c), len(mats))


def sweep(psi: np.ndarray, lam: np.ndarray, mats: np.ndarray, blks) -> np.ndarray:
    """The adjoint sweep on planar ``psi``, ``lam`` (in place): every gate undone from the last
    (blocks as :func:`run`); returns ``G[b]`` per sample and gate, ``(B, G, 2, 2)`` complex128,
    ``G[a, c] = sum lam_a conj(psi_c)`` with ``lam`` after and ``psi`` before the gate."""
    k = kernel("batched_sweep", 0)
    gates = len(mats)
    dags = as_reals(mats.conj().transpose(0, 2, 1), psi.dtype)
    parts, split = _calls(psi, psi.shape[0] * psi.shape[2], gates)
    acc = np.zeros((split, psi.shape[0], gates, 8))

    def block(s, blk, c, a):  # a block's sums in an array of their own (one signature: C-contiguous)
        part = np.zeros((a[s].shape[0], len(blk.index), 8))
        k(psi[s], lam[s], dags[blk.index], *blk.lay, blk.ext, blk.starts, blk.offs, blk.W, c, part)
        a[s, blk.index] += part

    _first_use("batched_sweep", psi.dtype)
    if parts is not None:
        run_parts(lambda s: [block(s, blk, np.zeros(1, np.int64), acc[0]) for blk in blks[::-1]],
                  [(s,) for s in parts])
    else:
        for blk in blks[::-1]:
            counter = np.zeros(1, np.int64)
            run_parts(block, [(slice(None), blk, counter, acc[p]) for p in range(split)])
    total = acc.sum(axis=0)
    return (total[..., 0::2] + 1j * total[..., 1::2]).reshape(psi.shape[0], gates, 2, 2)


def observe(psi: np.ndarray, lam: np.ndarray | None, obs: np.ndarray) -> np.ndarray:
    """``rho[b, a, c] = sum conj(psi_a) psi_c`` over wire 0's halves of planar ``psi`` ``(B, 2, N)``,
    ``(B, 2, 2)`` complex128, and (unless ``lam`` is None) planar ``lam <- O psi``, ``obs`` the
    ``(2, 2)`` complex ``O`` on wire 0: one read of ``psi``."""
    k = kernel("batched_observe", 0)
    o = as_reals(np.asarray(obs)[None], psi.dtype)[0]
    parts, split = _calls(psi, psi.shape[0] * psi.shape[2], 1)
    sums = np.zeros((split, psi.shape[0], 4))
    out = psi if lam is None else lam
    half = state_size(psi) // 2
    _first_use("batched_observe", psi.dtype)
    if parts is not None:
        run_parts(k, [(psi[s], out[s], o, half, lam is not None, np.zeros(1, np.int64), sums[0, s])
                      for s in parts])
    else:
        counter = np.zeros(1, np.int64)
        run_parts(k, [(psi, out, o, half, lam is not None, counter, sums[p]) for p in range(split)])
    s = sums.sum(axis=0)
    rho = np.empty((psi.shape[0], 2, 2), dtype=np.complex128)
    rho[:, 0, 0], rho[:, 1, 1] = s[:, 0], s[:, 1]
    rho[:, 0, 1] = s[:, 2] + 1j * s[:, 3]
    rho[:, 1, 0] = s[:, 2] - 1j * s[:, 3]
    return rho


def factor_gradients(lam: np.ndarray, factors: np.ndarray, left: np.ndarray | None = None) -> np.ndarray:
    """``2 sum_z lam[b, z] [z_i = a] prod_{j != i} conj(f[b, j, z_j])`` for every wire ``i``:
    ``(B, n, 2)`` of the factors' dtype, for planar ``lam`` ``(B, 2, 2**n)`` (consumed:
    overwritten) and ``factors`` ``(B, n, 2)``; ``left``: complex scratch ``(B, 2**n)`` (a new
    one when None)."""
    k = kernel("batched_factor_gradients", 0)
    factors = np.ascontiguousarray(factors)
    out = np.empty(factors.shape, dtype=factors.dtype)
    left = np.empty((lam.shape[0], state_size(lam)), dtype=factors.dtype) if left is None else left
    _first_use("batched_factor_gradients", lam.dtype)
    run_parts(k, [(lam[s], factors[s], left[s], out[s])
                  for s in slices(lam.shape[0], threads_for(lam.shape[0] * lam.shape[2]))])
    return out
