"""How many bytes a QAOA simulation needs, and refusing the ones that do not fit.

What is free is the engine's one answer, :func:`qhybrid.sim.memory.available_bytes`
(``MemAvailable`` on Linux, free CUDA memory); only the QAOA-specific estimate lives here.
Pure arithmetic (dtypes by name or as torch dtypes): the CLI's pre-flight and the numba
path use it without importing torch.
"""
from __future__ import annotations

import os

from qhybrid.errors import MemoryLimitError
from qhybrid.sim import memory as _sim_memory

#: Bytes of state buffers the stored-state sweep may hold (``QAOA.STORE_BUDGET``; the estimate reads it here, without numpy).
STORE_BUDGET = 1200 * 2**20
#: States of at most ``2**SERIAL_BITS`` amplitudes run on one thread: waking others costs more (``QAOA.SERIAL_BITS``).
SERIAL_BITS = 16


def state_bytes(n: int, dtype) -> int:
    """Bytes of one ``2**n`` state vector of ``dtype`` (``"complex128"``, ``torch.complex64``, ...)."""
    return (2**n) * _sim_memory.itemsize(dtype)


def required_bytes(n: int, *, dtype="complex128", kernels: str = "numba", batch: int = 1,
                   index_itemsize: int = 1) -> int:
    """Peak bytes for one energy+gradient call (estimate, including the cost diagonal).

    ``kernels``: the kernel set's name. The fused numba path keeps two states (psi, lambda) plus the small-int cost index;
    the torch reference keeps about eight states' worth of temporaries per parameter set
    and a dense float64 diagonal.
    """
    s = state_bytes(n, dtype)
    size = 2**n
    if kernels == "numba":
        return 2 * s + size * (index_itemsize + 2 + 4)  # + int16 copy, int32 accumulator while building
    return batch * 8 * s + size * (8 + 1 + index_itemsize + 4)


def available_bytes(device) -> int:
    """Memory the simulation may use on ``device``: :func:`qhybrid.sim.memory.available_bytes`
    (free CUDA memory, or MemAvailable), else 80% of physical RAM where that cannot be read."""
    free = _sim_memory.available_bytes(device)
    if free is not None:
        return int(free)
    try:
        return int(0.8 * os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 1 << 62


def check_fits(needed: int, *, n: int, device, limit: int | None = None) -> None:
    """Raise :class:`MemoryLimitError` when ``needed`` bytes exceed the limit (or what ``device`` has)."""
    available = available_bytes(device) if limit is None else int(limit)
    if needed > available:
        raise MemoryLimitError(
            f"QAOA on {n} qubits needs about {needed:,} bytes ({needed / 2**30:.2f} GiB) but "
            f"{available:,} bytes ({available / 2**30:.2f} GiB) are available on {device}; "
            "use fewer nodes, complex64, or a machine with more memory"
        )
