"""Python threads for serial, GIL-free kernels: each thread runs the kernel on its own part.

A serial numba kernel compiles in a fraction of the time of its ``prange`` twin (measured:
the QML sweep about 3x faster, and one kernel instead of two), and with ``nogil`` it runs on
Python threads side by side. So the batched kernels (:mod:`.batched`) are compiled serial
only and split here: one slice of the batch per thread, or one gate's runs split between
threads when the batch is smaller than the thread count.

How many threads: :func:`threads_for`, the engine's policy (:mod:`.jit`'s count, numba's
``set_num_threads``; one below :data:`qhybrid.sim.registry.PARALLEL_MIN` amplitudes). The
pool's worker threads live for the process (started on first use, one pool per size; a forked
child starts its own).
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

from .jit import num_threads
from .registry import PARALLEL_MIN

_POOLS: dict[tuple[int, int], ThreadPoolExecutor] = {}
_LOCK = threading.Lock()


def threads_for(size: int, threads: int | None = None) -> int:
    """Threads for a call over ``size`` amplitudes: ``threads`` (default: the engine's thread
    count), 1 below PARALLEL_MIN. The estimate asks it with an instance's cores."""
    return 1 if size < PARALLEL_MIN else max(1, num_threads() if threads is None else threads)


def slices(n: int, parts: int) -> list[slice]:
    """``n`` rows cut into at most ``parts`` contiguous slices of near-equal size (none empty)."""
    parts = max(1, min(n, parts))
    return [slice(n * p // parts, n * (p + 1) // parts) for p in range(parts)]


def run_parts(fn, calls) -> None:
    """``fn(*args)`` for every ``args`` in ``calls``: the first on this thread, the others on
    pool threads at the same time; returns when all are done (re-raising the first error)."""
    calls = list(calls)
    if not calls:
        return
    if len(calls) == 1:
        fn(*calls[0])
        return
    pool = _pool(len(calls) - 1)
    futures = [pool.submit(fn, *args) for args in calls[1:]]
    try:
        fn(*calls[0])
    finally:
        for f in futures:
            f.result()


def _pool(workers: int) -> ThreadPoolExecutor:
    """The pool of ``workers`` threads, new in a forked child (whose copy has no threads)."""
    with _LOCK:
        key = (os.getpid(), workers)
        pool = _POOLS.get(key)
        if pool is None:
            pool = _POOLS[key] = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="qhybrid-sim")
        return pool
