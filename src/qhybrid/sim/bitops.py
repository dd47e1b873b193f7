"""Bit helpers shared by the numba kernels (inlined where they are called)."""
from __future__ import annotations

import numpy as np

from .jit import njit


@njit(inline="always")
def parity(x):
    """Parity of the set bits of a 64-bit integer."""
    x ^= x >> 32
    x ^= x >> 16
    x ^= x >> 8
    x ^= x >> 4
    x ^= x >> 2
    x ^= x >> 1
    return x & 1


@njit(cache=True)
def sign_table(L, zmask):
    """``t[lo] = (-1)**parity(lo & zmask)`` for ``lo < L``."""
    t = np.empty(L)
    for lo in range(L):
        t[lo] = -1.0 if parity(lo & zmask) else 1.0
    return t
