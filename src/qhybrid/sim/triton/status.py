"""Can the Triton kernels run here? One answer, with its reason, for ``doctor`` and ``devices``.

Triton's README ("Compatibility") lists NVIDIA GPUs of compute capability 8.0 and newer
(Ampere on): a V100 (``ml.p3.*``, 7.0) or a T4 (``g4dn``, 7.5) runs the torch reference
kernels instead. Under the interpreter (``TRITON_INTERPRET=1``) the kernels run on CPU
tensors, slowly: tests and ``benchmarks/gpu_check.py --interpret`` only.
"""
from __future__ import annotations

import importlib.util
import os

#: Triton's documented minimum compute capability (README, "Supported Hardware").
MIN_CAPABILITY = (8, 0)


def interpreting() -> bool:
    """True when Triton's interpreter is requested (``TRITON_INTERPRET=1`` in the environment)."""
    return os.environ.get("TRITON_INTERPRET", "0").strip().lower() in {"1", "true", "yes", "on"}


def _installed() -> str | None:
    """Triton's version, or None when it is not installed (found without importing it)."""
    if importlib.util.find_spec("triton") is None:
        return None
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("triton")
    except PackageNotFoundError:  # an unpackaged checkout on the path
        return "unknown"


def triton_status(device=None) -> tuple[bool, str]:
    """``(usable, reason)``: whether a GPU device would run the Triton kernels, in one line.

    Args:
        device: a CUDA device (``torch.device``, index or string); None: the current one.

    Returns:
        ``(True, "triton 3.x on <GPU> (compute capability 9.0)")`` or ``(False, why)``, where
        ``why`` names the missing piece (Triton, CUDA, a new enough GPU) and says that the
        torch reference kernels run instead.
    """
    version = _installed()
    if version is None:
        return False, ("triton is not installed (pip install triton, or a CUDA build of torch, "
                       "which brings it): the torch reference kernels run instead")
    if interpreting():
        return True, f"triton {version} interpreter (TRITON_INTERPRET=1): kernels run on CPU tensors, slowly"
    import torch

    if not torch.cuda.is_available():
        return False, f"triton {version} is installed but no CUDA device is visible: the torch reference runs"
    dev = torch.device("cuda", torch.cuda.current_device()) if device is None else torch.device(device)
    if dev.type != "cuda":
        return False, f"device {str(dev)!r} is not a CUDA device: the Triton kernels run on CUDA only"
    major, minor = torch.cuda.get_device_capability(dev)
    name = torch.cuda.get_device_name(dev)
    need = ".".join(map(str, MIN_CAPABILITY))
    if (major, minor) < MIN_CAPABILITY:
        return False, (f"{name} has compute capability {major}.{minor}; Triton supports {need} and newer: "
                       "the torch reference kernels run instead")
    return True, f"triton {version} on {name} (compute capability {major}.{minor})"


def capability_path(capability, name: str = "the GPU") -> tuple[str, str]:
    """``("triton" | "torch", why)``: the kernel set ``qhybrid.gpu`` runs on a GPU of compute
    ``capability`` (``(major, minor)``; None or ``()``: unknown), where Triton is installed (CUDA
    builds of torch bring it). The estimate asks this of an instance type's GPU model.

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
