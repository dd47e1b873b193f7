"""The numba kernel registry: kernels register where they are defined, compile on first use.

A kernel module marks each kernel with :func:`register` (a plain Python function); nothing
keeps a list of them. ``kernel(name, size)`` returns the compiled kernel for a state of
``size`` amplitudes: serial below :data:`PARALLEL_MIN`, threaded (``prange``) at or above it
(measured: threads lose below that on 2 busy cores). Each variant compiles the first time it
is asked for, into the cache of :mod:`qhybrid.sim.jit`, so only kernels actually used are
ever compiled.
"""
from __future__ import annotations

import importlib
import types

from .jit import HAVE_NUMBA, PRANGE_ONLY, njit, num_threads

_OPTS = dict(parallel=PRANGE_ONLY, cache=True, fastmath=True, nogil=True)
_SERIAL = dict(parallel=False, cache=True, fastmath=True, nogil=True)

#: States with at least this many amplitudes use the threaded kernels; below it the
#: serial ones (a parallel region costs more than a small pass, worse on a busy machine).
PARALLEL_MIN = 1 << 15

#: The modules whose kernels register themselves on import (imported when a kernel is asked for).
KERNEL_MODULES = ("fastkernels", "fastgrad", "fastobs", "fastplanar", "batchedkernels")

_FUNCS: dict = {}
_COMPILED: dict = {}


def register(f):
    """Mark ``f`` as a kernel named ``f.__name__`` (compiled serial and threaded when first used)."""
    if f.__name__ in _FUNCS and _FUNCS[f.__name__] is not f:
        raise ValueError(f"kernel {f.__name__!r} registered twice")
    _FUNCS[f.__name__] = f
    return f


def names() -> list[str]:
    """Every registered kernel's name (after importing the kernel modules)."""
    _load()
    return sorted(_FUNCS)


def _load() -> None:
    for mod in KERNEL_MODULES:
        importlib.import_module(f"{__package__}.{mod}")


def kernel(name: str, size: int):
    """The compiled kernel ``name``: threaded for states of ``size`` >= PARALLEL_MIN, else serial."""
    threaded = size >= PARALLEL_MIN
    key = (name, threaded)
    compiled = _COMPILED.get(key)
    if compiled is None:
        if not HAVE_NUMBA:
            raise ImportError("numba is not installed")
        if name not in _FUNCS:
            _load()
        f = _FUNCS[name]
        compiled = _COMPILED[key] = njit(**(_OPTS if threaded else _SERIAL))(
            _renamed(f, "_threaded" if threaded else "_serial"))
    return compiled


def _renamed(f, suffix):
    """A copy of ``f`` with its own name: numba's on-disk cache is keyed by the function's
    name, not by the ``parallel`` flag, so the two variants must not share one."""
    g = types.FunctionType(f.__code__, f.__globals__, f.__name__ + suffix, f.__defaults__, f.__closure__)
    g.__qualname__ = f.__qualname__ + suffix
    g.__module__ = f.__module__
    g.__doc__ = f.__doc__
    return g


def slots(size: int) -> int:
    """How many workers a planar kernel (:mod:`.fastplanar`) runs: one per thread, each taking
    chunks from a shared counter until none are left (so one slow thread does not hold up
    the pass); one for the serial kernels."""
    if size < PARALLEL_MIN:
        return 1
    return num_threads()
