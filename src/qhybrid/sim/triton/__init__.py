"""Triton kernels of the engine: planar (real and imaginary planes) state vectors on CUDA.

Importing this package imports no Triton: :func:`qhybrid.devices.gpu_kernel_path` says whether
the kernels run here (and why not); :mod:`.ops` (the launchers) and :mod:`.qaoa` import Triton and are only
imported once it says yes. Under Triton's interpreter (``TRITON_INTERPRET=1`` set before the
first import of Triton) the same kernels run on CPU tensors: that is how they are tested.
"""
from __future__ import annotations

from .status import MIN_CAPABILITY, capability_path, interpreting

__all__ = ["MIN_CAPABILITY", "capability_path", "interpreting"]
