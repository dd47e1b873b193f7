"""numba's first kernel load, made shorter from the workload's side (the kernels are untouched).

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
