"""Walsh-Hadamard butterflies and tile copies on the float view of complex states (numba, CPU).

:func:`butterflies` gives the address of one compiled entry per float dtype, ``f(p, start, size,
h0, hmax)`` on the floats at ``p`` (``f`` the float view of a complex array, re/im interleaved):
the whole transform of the block ``f[start:start+size]`` (``size = 2 * 2**k`` floats) for
``h0 == 0``, else its float strides ``h0 <= h < hmax``; ``tile_in`` / ``tile_out`` copy a tile
of rows between a state and a small buffer. The QAOA mixer sweep
(:mod:`qhybrid.qaoa.numba_kernels`) is built from these; :func:`wht_block` / :func:`wht_range`
call the entry from Python. They trust their inputs.

A kernel calls the entry by address (an int64 argument; ``pointer`` / ``call_at`` of
:mod:`qhybrid.sim.address`): a kernel that linked the butterflies
would have numba optimise and emit them once more inside it, seconds of its first compilation
each. For the same reason the entry's body is the only function that links the stride chains
(``_any8``, ``_any4``, ``_any2``, each compiled once): the range and block logic around them is
inlined into it, not a function of its own that would link them again (three levels of linking
cost about a third of the entry's compilation).
"""
from __future__ import annotations

import numpy as np

from .address import call_at, pointer  # noqa: F401 - how a kernel calls butterflies' entry
from .jit import njit

try:
    from numba import carray
except ImportError:  # pragma: no cover
    carray = None

_OPTS = dict(fastmath=True, cache=True, nogil=True)


# Butterfly loops index with uint64 (numba wraps negative signed indices: a compare and select
# per access that stops LLVM vectorising) and see the stride as a compile-time constant (one loop
# per power of two, selected by _any8/_any4/_any2): with both, the loops compile to packed
# AVX2/AVX-512 adds without runtime alias checks, about 1.5-2x faster than the slice form and
# 3x faster than the same loop with a run-time stride. Each specialisation costs compile time
# (in every kernel that links these), so the chains hold only the strides that
# ``qhybrid.qaoa.QAOA``'s layouts reach (``STRIDES``: every n up to 34, both dtypes, 1 to 64
# threads, default block_bits); any other stride (an explicit block_bits) runs at run time.
_U2, _U3, _U4, _U5, _U6, _U7 = (np.uint64(v) for v in range(2, 8))

#: float strides compiled apart, by radix (see the comment above; tests/sim/test_walsh.py checks
#: that every layout's strides are here)
STRIDES = {8: (8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192),
           4: (2, 4, 8, 16, 32, 64, 128, 1024, 2048, 8192, 16384),
           2: (2, 16, 128, 1024, 2048, 8192, 16384, 32768)}


@njit(inline="always", **_OPTS)
def _pass8(f, start, size, h):
    H = np.uint64(h)
    H2, H3, H4, H5, H6, H7 = _U2 * H, _U3 * H, _U4 * H, _U5 * H, _U6 * H, _U7 * H
    for i in range(np.uint64(start), np.uint64(start + size), np.uint64(8 * h)):
        for j in range(i, i + H):
            x0 = f[j]
            x1 = f[j + H]
            x2 = f[j + H2]
            x3 = f[j + H3]
            x4 = f[j + H4]
            x5 = f[j + H5]
            x6 = f[j + H6]
            x7 = f[j + H7]
            s0 = x0 + x1
            d0 = x0 - x1
            s1 = x2 + x3
            d1 = x2 - x3
            s2 = x4 + x5
            d2 = x4 - x5
            s3 = x6 + x7
            d3 = x6 - x7
            t0 = s0 + s1
            t1 = d0 + d1
            t2 = s0 - s1
            t3 = d0 - d1
            t4 = s2 + s3
            t5 = d2 + d3
            t6 = s2 - s3
            t7 = d2 - d3
            f[j] = t0 + t4
            f[j + H] = t1 + t5
            f[j + H2] = t2 + t6
            f[j + H3] = t3 + t7
            f[j + H4] = t0 - t4
            f[j + H5] = t1 - t5
            f[j + H6] = t2 - t6
            f[j + H7] = t3 - t7


@njit(inline="always", **_OPTS)
def _pass4(f, start, size, h):
    H = np.uint64(h)
    H2, H3 = _U2 * H, _U3 * H
    for i in range(np.uint64(start), np.uint64(start + size), np.uint64(4 * h)):
        for j in range(i, i + H):
            x0 = f[j]
            x1 = f[j + H]
            x2 = f[j + H2]
            x3 = f[j + H3]
            s0 = x0 + x1
            d0 = x0 - x1
            s1 = x2 + x3
            d1 = x2 - x3
            f[j] = s0 + s1
            f[j + H] = d0 + d1
            f[j + H2] = s0 - s1
            f[j + H3] = d0 - d1


@njit(inline="always", **_OPTS)
def _pass2(f, start, size, h):
    H = np.uint64(h)
    for i in range(np.uint64(start), np.uint64(start + size), np.uint64(2 * h)):
        for j in range(i, i + H):
            x0 = f[j]
            x1 = f[j + H]
            f[j] = x0 + x1
            f[j + H] = x0 - x1


@njit(**_OPTS)
def _any8(f, start, size, h):
    """Radix-8 pass at float stride ``h`` (a power of two): each stride a layout reaches is its own
    compiled loop (see ``STRIDES``), so LLVM sees a constant distance between operands and
    vectorises without runtime alias checks; any other stride runs at run time."""
    if h == 8:
        _pass8(f, start, size, 8)
    elif h == 16:
        _pass8(f, start, size, 16)
    elif h == 32:
        _pass8(f, start, size, 32)
    elif h == 64:
        _pass8(f, start, size, 64)
    elif h == 128:
        _pass8(f, start, size, 128)
    elif h == 256:
        _pass8(f, start, size, 256)
    elif h == 512:
        _pass8(f, start, size, 512)
    elif h == 1024:
        _pass8(f, start, size, 1024)
    elif h == 2048:
        _pass8(f, start, size, 2048)
    elif h == 4096:
        _pass8(f, start, size, 4096)
    elif h == 8192:
        _pass8(f, start, size, 8192)
    else:
        _pass8(f, start, size, h)


@njit(**_OPTS)
def _any4(f, start, size, h):
    """Radix-4 pass at float stride ``h`` (a power of two): each stride a layout reaches is its own
    compiled loop (see ``STRIDES``), so LLVM sees a constant distance between operands and
    vectorises without runtime alias checks; any other stride runs at run time."""
    if h == 2:
        _pass4(f, start, size, 2)
    elif h == 4:
        _pass4(f, start, size, 4)
    elif h == 8:
        _pass4(f, start, size, 8)
    elif h == 16:
        _pass4(f, start, size, 16)
    elif h == 32:
        _pass4(f, start, size, 32)
    elif h == 64:
        _pass4(f, start, size, 64)
    elif h == 128:
        _pass4(f, start, size, 128)
    elif h == 1024:
        _pass4(f, start, size, 1024)
    elif h == 2048:
        _pass4(f, start, size, 2048)
    elif h == 8192:
        _pass4(f, start, size, 8192)
    elif h == 16384:
        _pass4(f, start, size, 16384)
    else:
        _pass4(f, start, size, h)


@njit(**_OPTS)
def _any2(f, start, size, h):
    """Radix-2 pass at float stride ``h`` (a power of two): each stride a layout reaches is its own
    compiled loop (see ``STRIDES``), so LLVM sees a constant distance between operands and
    vectorises without runtime alias checks; any other stride runs at run time."""
    if h == 2:
        _pass2(f, start, size, 2)
    elif h == 16:
        _pass2(f, start, size, 16)
    elif h == 128:
        _pass2(f, start, size, 128)
    elif h == 1024:
        _pass2(f, start, size, 1024)
    elif h == 2048:
        _pass2(f, start, size, 2048)
    elif h == 8192:
        _pass2(f, start, size, 8192)
    elif h == 16384:
        _pass2(f, start, size, 16384)
    elif h == 32768:
        _pass2(f, start, size, 32768)
    else:
        _pass2(f, start, size, h)


@njit(inline="always", **_OPTS)
def _range(f, start, size, h0, hmax):
    """Butterflies on float view ``f[start:start+size]`` over float strides ``h0 <= h < hmax``.

    Radix 8, then 4, then 2.
    """
    h = h0
    while 8 * h <= hmax:
        _any8(f, start, size, h)
        h *= 8
    while 4 * h <= hmax:
        _any4(f, start, size, h)
        h *= 4
    while 2 * h <= hmax:
        _any2(f, start, size, h)
        h *= 2


@njit(inline="always", **_OPTS)
def _low3(f, start, size):
    """Butterflies on complex bits 0..2 (float strides 2, 4, 8): groups of 8 complex in registers."""
    for i in range(start, start + size, 16):
        g = f[i:i + 16]
        for c in range(2):
            x0 = g[c]
            x1 = g[2 + c]
            x2 = g[4 + c]
            x3 = g[6 + c]
            x4 = g[8 + c]
            x5 = g[10 + c]
            x6 = g[12 + c]
            x7 = g[14 + c]
            s0 = x0 + x1
            d0 = x0 - x1
            s1 = x2 + x3
            d1 = x2 - x3
            s2 = x4 + x5
            d2 = x4 - x5
            s3 = x6 + x7
            d3 = x6 - x7
            t0 = s0 + s1
            t1 = d0 + d1
            t2 = s0 - s1
            t3 = d0 - d1
            t4 = s2 + s3
            t5 = d2 + d3
            t6 = s2 - s3
            t7 = d2 - d3
            g[c] = t0 + t4
            g[2 + c] = t1 + t5
            g[4 + c] = t2 + t6
            g[6 + c] = t3 + t7
            g[8 + c] = t0 - t4
            g[10 + c] = t1 - t5
            g[12 + c] = t2 - t6
            g[14 + c] = t3 - t7


_SUB = 2048  # floats per L1 sub-block (16 KiB of float64)


def _butterflies(p, start, size, h0, hmax):
    """The whole transform of the float block ``p[start:start+size]`` (``h0 == 0``; size = 2 * 2**k
    floats: bits 0..2 in registers, the next bits within L1-sized sub-blocks, the rest across
    them), else its float strides ``h0 <= h < hmax``. Every range runs through the one inlined
    copy of the chains below the loop: this function is the only one that compiles them."""
    f = carray(p, (start + size,))
    subs = 0
    if h0 == 0:
        if size < 16:
            h0, hmax = 2, size
        else:
            _low3(f, start, size)
            if size <= _SUB:
                h0, hmax = 16, size
            else:
                subs, h0, hmax = size // _SUB, _SUB, size
    for i in range(subs + 1):  # the sub-blocks, then the whole (one call site: one copy)
        s, n, a, b = start, size, h0, hmax
        if i < subs:
            s, n, a, b = start + i * _SUB, _SUB, 16, _SUB
        _range(f, s, n, a, b)


@njit(inline="always", **_OPTS)
def tile_in(src, dst, rows, bs, c0, w):
    """dst[r*w + c] = src[r*bs + c0 + c] on float views (2 floats per amplitude): contiguous runs of 2w."""
    w2 = np.uint64(2 * w)
    for r in range(rows):
        s = np.uint64(2 * (r * bs + c0))
        d = np.uint64(2 * r * w)
        for c in range(w2):
            dst[d + c] = src[s + c]


@njit(inline="always", **_OPTS)
def tile_out(src, dst, rows, bs, c0, w):
    """dst[r*bs + c0 + c] = src[r*w + c] on float views: the inverse of :func:`tile_in`."""
    w2 = np.uint64(2 * w)
    for r in range(rows):
        s = np.uint64(2 * r * w)
        d = np.uint64(2 * (r * bs + c0))
        for c in range(w2):
            dst[d + c] = src[s + c]


_ENTRIES: dict = {}


def entry_name(dtype) -> str:
    """The name :func:`butterflies` compiles ``dtype``'s entry under (``kernel_cache.compiling``):
    a process compiling it ahead holds that lock (``workloads/numba_load.compile_ahead``)."""
    return f"butterflies-{np.dtype(dtype).name}"


def loaded(dtype) -> bool:
    """Whether :func:`butterflies` has ``dtype``'s entry in this process already (no waiting)."""
    return np.dtype(dtype).name in _ENTRIES


def butterflies(dtype) -> int:
    """The address of the compiled entry ``f(p, start, size, h0, hmax)`` for float ``dtype``
    (``np.float64`` or ``np.float32``): the whole transform of ``p[start:start+size]`` when
    ``h0 == 0``, else its strides ``h0 <= h < hmax``; ``p = pointer(a)`` of a float array, the
    integers int64. A kernel takes the address as an int64 argument and calls it with
    ``call_at(address, p, ...)``, so the chains are compiled once, not once in every kernel
    (and the kernel stays cacheable: the address is data). Compiled (or loaded from the cache)
    on first use per dtype; while another process compiles it (``kernel_cache.compiling``), it
    waits, then loads that process's from the cache (or compiles it here if there is none)."""
    key = np.dtype(dtype).name
    entry = _ENTRIES.get(key)
    if entry is None:
        from numba import cfunc, types

        from qhybrid import kernel_cache

        real = types.float64 if key == "float64" else types.float32
        i64 = types.int64
        with kernel_cache.compiling(entry_name(key)):
            entry = _ENTRIES[key] = cfunc(types.void(types.CPointer(real), i64, i64, i64, i64),
                                          cache=True, fastmath=True)(_butterflies)
    return entry.address


def wht_block(f, start: int, size: int) -> None:
    """The whole transform of ``f[start:start+size]`` (``f`` a contiguous float64 or float32 array,
    ``size = 2 * 2**k`` floats), in place, from Python: :func:`butterflies`' entry with ``h0 = 0``."""
    _from_python(f, start, size, 0, 0)


def wht_range(f, start: int, size: int, h0: int, hmax: int) -> None:
    """Butterflies on ``f[start:start+size]`` over float strides ``h0 <= h < hmax`` (``h0 >= 2``), in
    place, from Python: :func:`butterflies`' entry."""
    _from_python(f, start, size, h0, hmax)


def _from_python(f, start, size, h0, hmax) -> None:
    import ctypes

    i64 = ctypes.c_int64
    call = ctypes.CFUNCTYPE(None, ctypes.c_void_p, i64, i64, i64, i64)(butterflies(f.dtype))
    call(f.ctypes.data, int(start), int(size), int(h0), int(hmax))
