"""numba's first kernel load, made shorter from the workload's side (the kernels are untouched).

:func:`compile_ahead`: on an empty kernel cache, child processes compile a job's kernels ahead.
QAOA: a child compiles the Walsh-Hadamard butterfly entry (``sim.walsh.butterflies``, about half
of a cold QAOA job's compilation) while this process compiles the kernels, which take the entry's
address only when they run (numba compiles in one thread per process at a time, so only a second
process overlaps). QML: a child compiles the layer's three kernels (``sim.batched``), started
before the job imports torch, so they compile while it does. A child holds
``kernel_cache.compiling``'s lock on each kernel it compiles until that kernel is in the cache
(the entry: until it exits): the job's first call of it waits for it, then loads it from the
cache, or compiles it itself when the child left none. The children die with this process
(``PR_SET_PDEATHSIG``) and :func:`end_children` ends and reaps them.

Before its first kernel runs, cached or freshly compiled, numba loads its whole library of
implementations. One of them, ``numba.np.arraymath``, probes for BLAS at import by importing
``scipy.linalg.cython_blas``, that is all of ``scipy.linalg`` (with ``numpy.f2py`` and
``numpy.testing`` that scipy's array-API layer pulls in): half a second or more, a third of a
small job's start-up. The probe's one use is to compute float inner products inside numba's
``np.cov``-style helpers by BLAS rather than by a loop; no qhybrid kernel has one, and ``np.dot``
and ``np.linalg`` in a kernel still find BLAS (they import it themselves when typed).

:func:`skip_blas_probe` imports that module with the probe failing, then leaves scipy importable
as before. Call it before the first kernel runs; later it does nothing.
"""
from __future__ import annotations

import os
import subprocess
import sys

PROBED = "scipy.linalg.cython_blas"
MODULE = "numba.np.arraymath"


def skip_blas_probe() -> bool:
    """Import ``numba.np.arraymath`` without its scipy probe; True when it did (False: numba had
    loaded it already, scipy.linalg is loaded anyway, or this numba has no such module)."""
    if MODULE in sys.modules or PROBED in sys.modules:
        return False
    sys.modules[PROBED] = None  # `import scipy.linalg.cython_blas` raises ImportError: "no BLAS"
    try:
        __import__(MODULE)
    except ImportError:  # pragma: no cover - a numba laid out differently: its own way, unchanged
        return False
    finally:
        if PROBED in sys.modules and sys.modules[PROBED] is None:
            del sys.modules[PROBED]
    return True


ENTRY_INDEX = "walsh._butterflies-*.nbi"  # numba's index file of the butterfly entry in the cache
#: The QML layer's kernels (``sim.batched.KERNELS``, in the order a training step first calls
#: them), and how they are shared among children: all in one (measured on 2 busy cores: a second
#: child, the sweep alone, made the first epoch ~0.5 s shorter but the job's start ~2-4 s longer,
#: each child paying ~1 s of CPU for its own start).
QML_KERNELS = ("batched_product", "batched_run", "batched_observe", "batched_sweep", "batched_factor_gradients")
QML_GROUPS = (QML_KERNELS,)
QML_INDEXES = tuple(f"batchedkernels.{name}_serial-*.nbi" for name in QML_KERNELS)  # their index files in the cache
_children: list = []


def compile_ahead(dtype: str, *, workload: str = "qaoa") -> bool:
    """Start child processes compiling ``workload``'s kernels for ``dtype`` (``complex128`` or
    ``complex64``: the float dtype of its states) when the kernel cache has none of them yet;
    True when one was started. ``qaoa``: the butterfly entry (one child); ``qml``: the QML
    layer's kernels (:data:`QML_GROUPS`, one child per group). Each child holds the
    ``kernel_cache.compiling`` lock of every kernel it is to compile and releases each once
    that kernel is in the cache, so the job waits for a kernel only while it is being compiled.
    Standard library only (nothing of numba is loaded here), so it can run first thing in a job."""
    from qhybrid import kernel_cache

    real = {"complex128": "float64", "complex64": "float32"}[dtype]
    if workload == "qaoa":
        indexes, groups = (ENTRY_INDEX,), ((f"butterflies-{real}",),)  # (walsh.entry_name)
    elif workload == "qml":
        indexes = QML_INDEXES
        groups = tuple(tuple(f"{name}-{real}" for name in group) for group in QML_GROUPS)  # (batched.lock_name)
    else:
        raise ValueError(f"workload={workload!r}: valid are qaoa, qml")
    folder = kernel_cache.open_cache()
    try:
        if all(next(folder.glob(f"*/{index}"), None) is not None for index in indexes):
            return False
    except OSError:
        return False
    started = False
    for group in groups:
        started |= _start(folder, workload, real, group)
    return started


def _start(folder, workload: str, real: str, locks: tuple[str, ...]) -> bool:
    """One child compiling the kernels of lock names ``locks`` (those whose lock it could take)."""
    from qhybrid import kernel_cache

    held = [(name, fd) for name, fd in ((n, kernel_cache.hold_compiling(n)) for n in locks) if fd is not None]
    if not held:
        return False
    try:
        from qhybrid.jobs.procs import die_with_parent

        _children.append(subprocess.Popen(
            [sys.executable, "-m", "qhybrid.workloads.numba_load", workload, real,
             *(f"{name}={fd}" for name, fd in held)], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, pass_fds=tuple(fd for _, fd in held), preexec_fn=die_with_parent,
            env={**os.environ, "NUMBA_CACHE_DIR": str(folder)}))
    except OSError:
        return False
    finally:
        for _, fd in held:
            os.close(fd)  # the child's copies hold the locks now
    return True


def end_children() -> None:
    """End (SIGKILL) any child of :func:`compile_ahead` still running and reap them all."""
    while _children:
        child = _children.pop()
        if child.poll() is None:
            child.kill()
        child.wait()


def _compile(workload: str, real: str, held: list[str]) -> None:
    """The child: the kernels of ``workload`` for float dtype ``real`` compiled into the kernel
    cache, each under the lock its parent took for it (``held``: ``name=descriptor``), released
    once its kernel is there."""
    import numpy as np

    from qhybrid import kernel_cache

    locks = dict(item.rsplit("=", 1) for item in held)
    for name, fd in locks.items():
        kernel_cache.adopt(name, int(fd))
    skip_blas_probe()
    if workload == "qaoa":
        from qhybrid.sim import walsh

        walsh.butterflies(np.dtype(real))
        return
    from qhybrid.sim import batched

    for name in batched.KERNELS:
        lock = batched.lock_name(name, real)
        if lock in locks:
            batched.compile_kernel(name, real)
            kernel_cache.release(lock)


if __name__ == "__main__":
    _compile(sys.argv[1], sys.argv[2], sys.argv[3:])
