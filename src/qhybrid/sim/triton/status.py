"""What the Triton kernels need: Triton's minimum compute capability, and whether its interpreter is on.

Triton's README ("Compatibility") lists NVIDIA GPUs of compute capability 8.0 and newer
(Ampere on): a V100 (``ml.p3.*``, 7.0) or a T4 (``g4dn``, 7.5) runs the torch reference
kernels instead. Whether this machine's GPU runs them is decided once, in
:func:`qhybrid.devices.gpu_kernel_path` (the one place that asks about CUDA), from the figure
here. Under the interpreter (``TRITON_INTERPRET=1``) the kernels run on CPU tensors, slowly:
tests and ``benchmarks/gpu_check.py --interpret`` only.
"""
from __future__ import annotations

import os

#: Triton's documented minimum compute capability (README, "Supported Hardware").
MIN_CAPABILITY = (8, 0)


def interpreting() -> bool:
    """True when Triton's interpreter is requested (``TRITON_INTERPRET=1`` in the environment)."""
    return os.environ.get("TRITON_INTERPRET", "0").strip().lower() in {"1", "true", "yes", "on"}


def capability_path(capability, name: str = "the GPU") -> tuple[str, str]:
    """``("triton" | "torch", why)``: the kernel set ``qhybrid.gpu`` runs on a GPU of compute
    ``capability`` (``(major, minor)``; None or ``()``: unknown), where Triton is installed (CUDA
    builds of torch bring it). ``devices.gpu_kernel_path`` asks this of the local GPU, the
    estimate of an instance type's GPU model: one rule, one wording.

    Example:
        >>> capability_path((7, 0), "V100")[0]
        'torch'
    """
    need = ".".join(map(str, MIN_CAPABILITY))
    if not capability:
        return "torch", f"{name}'s compute capability is unknown: the torch reference kernels assumed"
    cap = ".".join(map(str, capability))
    if tuple(capability) < MIN_CAPABILITY:
        return "torch", f"{name} has compute capability {cap}, below Triton's documented minimum {need}"
    return "triton", f"{name}, compute capability {cap}"
