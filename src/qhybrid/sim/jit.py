"""numba for every kernel module: where compiled kernels are cached, and whether numba is there.

Import this before defining a kernel (``from qhybrid.sim.jit import numba, njit, prange``):
numba's cache locator is chosen when a function is decorated, so the cache directory must
be set first. Compiled kernels go to ``NUMBA_CACHE_DIR`` when it is set, else to
``$XDG_CACHE_HOME/qhybrid`` (``~/.cache/qhybrid``): once per install and machine, never
into the package or a source tree (numba's default writes ``__pycache__`` beside the
source, i.e. into ``src/`` for an editable install).

Without numba (``HAVE_NUMBA`` false) the engine runs its torch kernels; :func:`notice`
says so once on stderr.
"""
from __future__ import annotations

import contextlib
import os
import sys


from qhybrid.kernel_cache import cache_dir  # noqa: E402  (re-exported)


# numba reads NUMBA_CACHE_DIR when it loads and again whenever a NUMBA_* variable changes
# (config reload at each compilation): set both, before any kernel is decorated.
os.environ.setdefault("NUMBA_CACHE_DIR", str(cache_dir()))

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
    if not numba.config.CACHE_DIR:
        numba.config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]

HAVE_NUMBA = numba is not None

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


class Launcher:
    """A numba kernel that receives the kernels it calls as arguments (first-class functions).

    A kernel that calls another numba function directly links the callee's code into its own
    and optimises it again (for a ``prange`` kernel, more than once): with the Walsh–Hadamard
    butterflies that is most of a kernel's compile time. Called through a function pointer
    instead, the callee is compiled once and each kernel compiles in a fraction of the time,
    at the cost of an indirect call per block. ``Launcher(kernel, callees)`` calls
    ``kernel(*args, *callees(args))``: ``callees`` gives ``(dispatcher, signature)`` pairs for the
    arguments' dtypes; the kernel's signature (those arguments' numba types, the callees as
    ``FunctionType``) is compiled or loaded from the cache on first use, once per signature.
    """

    def __init__(self, kernel, callees):
        self.kernel, self.callees = kernel, callees
        self.__doc__ = kernel.__doc__
        self._entries: dict = {}

    @staticmethod
    def _key(args) -> tuple:
        return tuple((a.dtype.num, a.ndim, a.flags.writeable) if hasattr(a, "dtype") and hasattr(a, "ndim")
                     else type(a) for a in args)

    def __call__(self, *args):
        key = self._key(args)
        found = self._entries.get(key)
        if found is None:
            found = self._entries[key] = self._compile(args)
        entry, fns = found
        return entry(*args, *fns)

    def _compile(self, args):
        pairs = self.callees(args)
        sig = tuple(numba.typeof(a) for a in args) + tuple(numba.types.FunctionType(s) for _, s in pairs)
        self.kernel.compile(sig)
        return self.kernel.overloads[sig].entry_point, tuple(_Address(fn, s) for fn, s in pairs)


class _Address:
    """A compiled callee as a first-class function argument, its address looked up once: numba
    unboxes a dispatcher anew at every call (about 0.2 ms), an object of the wrapper-address
    protocol by one attribute call."""

    def __init__(self, dispatcher, signature):
        from numba.experimental.function_type import _get_wrapper_address

        self.dispatcher = dispatcher  # keeps the compiled code alive
        self._address = _get_wrapper_address(dispatcher, signature)

    def __wrapper_address__(self) -> int:
        return self._address
