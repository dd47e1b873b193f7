"""Every registered kernel set, as test parameters: the one fixture each set runs against the
reference (random circuits, QAOA, QML; complex128 to 1e-10, complex64 to 1e-5).

``KERNEL_SETS`` holds one ``pytest.param`` per registered name (``qhybrid.sim.kernels``), skipped
where the set cannot load (its package missing) or runs on CUDA alone and no GPU is visible.
Tests take the ``kernel_set`` fixture (``tests/conftest.py``: the loaded
:class:`~qhybrid.sim.kernels.KernelSet`) or parametrize over ``KERNEL_SETS`` (names), and put
their tensors on :func:`device_for` the set. A set registered later (Triton) joins every test
that uses them without an edit here.
"""
from __future__ import annotations

import pytest

from qhybrid.sim.kernels import KernelSetUnavailable, get_kernel_set, kernel_set_names

#: Tolerances against the reference, by dtype name.
TOL = {"complex128": 1e-10, "complex64": 1e-5}


def _cuda() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:  # pragma: no cover
        return False


def skip_reason(name: str) -> str | None:
    """Why the set ``name`` cannot run its tests here, or None."""
    try:
        ks = get_kernel_set(name)
    except KernelSetUnavailable as e:
        return str(e)
    if not ks.runs_on("cpu") and not _cuda():
        return f"kernel set {name!r} runs on CUDA only and no GPU is visible"
    return None


def _param(name: str):
    reason = skip_reason(name)
    return pytest.param(name, id=name, marks=pytest.mark.skip(reason=reason) if reason else ())


#: One parameter per registered kernel set (names), unavailable ones skipped.
KERNEL_SETS = [_param(name) for name in kernel_set_names()]


def device_for(ks) -> str:
    """Where a test puts its tensors for the set ``ks``: the CPU when it runs there, else CUDA."""
    return "cpu" if ks.runs_on("cpu") else "cuda"
