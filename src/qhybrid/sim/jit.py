"""numba for every kernel module: where compiled kernels are cached, and whether numba is there.

Import this before defining a kernel (``from qhybrid.sim.jit import numba, njit, prange``):
numba's cache locator is chosen when a function is decorated, so the cache directory must
be set first. Compiled kernels go to :func:`qhybrid.kernel_cache.open_cache`'s folder, one per
version and kernel sources under ``NUMBA_CACHE_DIR`` when it is set, else under
``$XDG_CACHE_HOME/qhybrid`` (``~/.cache/qhybrid``): once per install and machine, never
into the package or a source tree (numba's default writes ``__pycache__`` beside the
source, i.e. into ``src/`` for an editable install), and never a kernel compiled from
other sources (numba alone would keep one whose inlined callee in another file changed).

Without numba (``HAVE_NUMBA`` false) the engine runs its torch kernels; :func:`notice`
says so once on stderr.
"""
from __future__ import annotations

import contextlib
import os
import sys


from qhybrid.kernel_cache import open_cache


# numba reads NUMBA_CACHE_DIR when it loads and again whenever a NUMBA_* variable changes
# (config reload at each compilation): set both, before any kernel is decorated. A user's
# NUMBA_CACHE_DIR is the base of the key folder (child processes inherit the key folder and
# recognise it).
os.environ["NUMBA_CACHE_DIR"] = str(open_cache())

try:
    import numba
    from numba import njit, prange
except ImportError:  # pragma: no cover - numba is a dependency; a platform without wheels lacks it
    numba = None
    prange = range

    def njit(*args, **kwargs):
        """Stands in for numba's: a kernel module that defines kernels fails to import."""
        raise ImportError("numba is not installed")
else:
    numba.config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]

HAVE_NUMBA = numba is not None


def _claim_intrinsic():
    """``claim(counter)``: atomically ``counter[0] += 1``, returning the old value (numba has no
    CPU atomics of its own). Threaded kernels hand out their chunks with it: each worker takes
    the next chunk when it is done with its last, so a thread that shares its core with a busy
    process does fewer chunks instead of holding up the whole pass (numba's ``prange`` splits
    its range statically, and ``set_parallel_chunksize`` only cuts finer static slices under
    the OpenMP layer)."""
    from numba.core import cgutils, types
    from numba.extending import intrinsic

    @intrinsic
    def claim(typingctx, counter):
        sig = types.int64(counter)

        def codegen(context, builder, signature, args):
            arr = context.make_array(signature.args[0])(context, builder, args[0])
            ptr = cgutils.get_item_pointer(context, builder, signature.args[0], arr,
                                           [context.get_constant(types.intp, 0)])
            return builder.atomic_rmw("add", ptr, context.get_constant(types.int64, 1), "monotonic")

        return sig, codegen

    return claim


if HAVE_NUMBA:
    claim = _claim_intrinsic()
else:  # pragma: no cover
    def claim(counter):
        """The serial stand-in: the next value of ``counter[0]``."""
        counter[0] += 1
        return counter[0] - 1

#: ``parallel=`` for threaded kernels: loops by ``prange`` alone. numba's other parallel
#: rewrites (array expressions, reductions, fusion) find nothing in our kernels, which loop
#: explicitly, and cost about a second of compilation per kernel.
PRANGE_ONLY = dict(prange=True, comprehension=False, setitem=False, reduction=False, numpy=False,
                   stencil=False, fusion=False, inplace_binop=False)
_noticed = False


def notice() -> None:
    """One line on stderr, once per process, when the torch kernels stand in for numba's."""
    global _noticed
    if not _noticed and not HAVE_NUMBA:
        _noticed = True
        print("qhybrid: numba is not installed; the CPU engine runs its torch kernels (slower): "
              "pip install numba", file=sys.stderr)


def num_threads() -> int:
    """numba's thread count (1 without numba)."""
    return numba.get_num_threads() if HAVE_NUMBA else 1


@contextlib.contextmanager
def threads(n: int | None, *, torch_too: bool = True):
    """numba's (and torch's) thread count set to ``n`` inside the block, restored after; the
    one thread policy of the engine (``None``: unchanged). numba's count cannot exceed the
    pool it started with (``NUMBA_NUM_THREADS``)."""
    if n is None:
        yield
        return
    if torch_too:  # (torch only when asked: the numba-only QAOA path never imports it)
        import torch

        old_torch = torch.get_num_threads()
        torch.set_num_threads(int(n))
    old_nb = numba.get_num_threads() if HAVE_NUMBA else None
    if HAVE_NUMBA:
        numba.set_num_threads(max(1, min(int(n), numba.config.NUMBA_NUM_THREADS)))
    try:
        yield
    finally:
        if torch_too:
            torch.set_num_threads(old_torch)
        if old_nb is not None:
            numba.set_num_threads(old_nb)
