"""numba's first kernel load, made shorter from the workload's side (the kernels are untouched).

:func:`compile_ahead`: on an empty kernel cache, a child process compiles the Walsh-Hadamard
butterfly entry (``sim.walsh.butterflies``, about half of a cold QAOA job's compilation) while
this process compiles the kernels, which take the entry's address only when they run (numba
compiles in one thread per process at a time, so only a second process overlaps). The child holds
``kernel_cache.compiling``'s lock on the entry until it exits: ``walsh.butterflies`` here waits for
it, then loads its entry from the cache, or compiles it here when the child left none. The child
dies with this process (``PR_SET_PDEATHSIG``) and :func:`end_children` ends and reaps it.

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
_children: list = []


def compile_ahead(dtype: str) -> bool:
    """Start a child process compiling the butterfly entry of ``dtype`` (``complex128`` or
    ``complex64``: the float dtype of its states) when the kernel cache has no butterfly entry
    yet; True when one was started. Standard library only (nothing of numba is loaded here), so it
    can run first thing in a job."""
    from qhybrid import kernel_cache

    real = {"complex128": "float64", "complex64": "float32"}[dtype]
    folder = kernel_cache.open_cache()
    try:
        if next(folder.glob(f"*/{ENTRY_INDEX}"), None) is not None:
            return False
    except OSError:
        return False
    fd = kernel_cache.hold_compiling(f"butterflies-{real}")  # (walsh.entry_name)
    if fd is None:
        return False
    try:
        from qhybrid.jobs.procs import die_with_parent

        _children.append(subprocess.Popen(
            [sys.executable, "-m", "qhybrid.workloads.numba_load", real, str(fd)], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, pass_fds=(fd,), preexec_fn=die_with_parent,
            env={**os.environ, "NUMBA_CACHE_DIR": str(folder)}))
    except OSError:
        return False
    finally:
        os.close(fd)  # the child's copy holds the lock now
    return True


def end_children() -> None:
    """End (SIGKILL) any child of :func:`compile_ahead` still running and reap them all."""
    while _children:
        child = _children.pop()
        if child.poll() is None:
            child.kill()
        child.wait()


def _compile(real: str, fd: int) -> None:
    """The child: the butterfly entry of float dtype ``real``, compiled into the kernel cache
    under the lock its parent took for it (the descriptor ``fd``)."""
    import numpy as np

    from qhybrid import kernel_cache

    skip_blas_probe()
    from qhybrid.sim import walsh

    kernel_cache.adopt(walsh.entry_name(real), fd)
    walsh.butterflies(np.dtype(real))


if __name__ == "__main__":
    _compile(sys.argv[1], int(sys.argv[2]))
