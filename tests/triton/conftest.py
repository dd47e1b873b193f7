"""The Triton kernels' tests run on CPU tensors under Triton's interpreter.

``triton.jit`` reads ``TRITON_INTERPRET`` when a kernel module is imported, so it is set here,
before any test module of this folder imports :mod:`qhybrid.sim.triton.kernels` (a session that
imported the kernels earlier without it cannot run them on CPU: the tests then skip).
"""
from __future__ import annotations

import os
import sys

import pytest

os.environ.setdefault("TRITON_INTERPRET", "1")

SENTINEL = complex(1234.5, -987.25)
PAD = 37  # guard elements before and after every buffer a kernel writes


def _interpreted() -> bool:
    module = sys.modules.get("qhybrid.sim.triton.kernels")
    if module is None:
        return True
    return type(module.pass_kernel).__name__ == "InterpretedFunction"


@pytest.fixture(scope="session")
def triton_ops():
    """:mod:`qhybrid.sim.triton.ops`, skipping when triton is missing or not interpreting."""
    pytest.importorskip("triton")
    if os.environ.get("TRITON_INTERPRET") != "1" or not _interpreted():
        pytest.skip("the Triton kernels were loaded without TRITON_INTERPRET=1 in this session")
    from qhybrid.sim.triton import ops

    return ops


class Guarded:
    """A tensor inside a larger buffer of sentinels (``PAD`` elements each side): an
    unmasked out-of-bounds store under the interpreter writes memory silently, the guards see it."""

    def __init__(self, value):
        import torch

        flat = value.reshape(-1)
        self.buffer = torch.empty(flat.numel() + 2 * PAD, dtype=value.dtype)
        fill = SENTINEL if value.is_complex() else SENTINEL.real
        self.buffer.fill_(fill)
        self.fill = fill
        self.t = self.buffer[PAD:PAD + flat.numel()].view(value.shape)
        self.t.copy_(value)

    def check(self):
        head, tail = self.buffer[:PAD], self.buffer[-PAD:]
        assert bool((head == self.fill).all()) and bool((tail == self.fill).all()), "guard band overwritten"


@pytest.fixture
def guarded():
    """``guarded(tensor) -> Guarded``; every guard is checked after the test body."""
    made = []

    def make(value):
        g = Guarded(value)
        made.append(g)
        return g

    yield make
    for g in made:
        g.check()


@pytest.fixture
def rng():
    import numpy as np

    return np.random.default_rng(2024)
