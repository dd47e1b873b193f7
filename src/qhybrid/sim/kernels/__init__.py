"""Kernel sets: one object per backend, chosen once (by ``devices.resolve``), used everywhere.

``get_kernel_set(name)`` returns the registered set ``name`` (one shared instance, made on first
use): ``"numba"`` (CPU), ``"torch"`` (the reference, CPU and CUDA), ``"triton"`` (CUDA; its
interpreter on CPU). ``default_kernel_set(device_type)`` is the engine's default for tensors on
a device type when the caller names none: numba on CPU when installed, else torch. Sets
register by name and the dotted path of their class (``register_kernel_set``), so nothing here
imports numba, torch or triton until a set is asked for. The interface is
:class:`~qhybrid.sim.kernels.base.KernelSet`; the torch reference's plain gate functions live
in :mod:`qhybrid.sim.kernels.torch_ops`.

Example:
    >>> get_kernel_set("torch").name
    'torch'
"""
from __future__ import annotations

from .base import KernelSet
from .registry import (
    KernelSetUnavailable,
    as_kernel_set,
    available_kernel_sets,
    default_kernel_set,
    get_kernel_set,
    kernel_set_module,
    kernel_set_names,
    register_kernel_set,
)

__all__ = ["KernelSet", "KernelSetUnavailable", "available_kernel_sets", "default_kernel_set",
           "get_kernel_set", "kernel_set_module", "kernel_set_names", "register_kernel_set", "as_kernel_set"]
