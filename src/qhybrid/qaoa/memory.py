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
                   index_itemsize: int = 1, symmetric: bool = False, layers: int = 1) -> int:
    """Peak bytes for one energy+gradient call (estimate, including the cost diagonal).

    ``kernels``: the kernel set's name. The fused numba path's peak is the larger of building the
    cost diagonal (an int32 accumulator over ``2**n`` and the small-int index cast from it) and the
    sweep: that index, its int16 copy over the simulated states, two states (psi, lambda) of
    ``2**(n-1)`` amplitudes under Max-Cut's flip symmetry (``symmetric``), else ``2**n``, and the
    stored-state sweep's ``2 layers - 1`` extra states when they fit ``STORE_BUDGET``. The ranking
    of the likeliest bitstrings works in chunks (``sweep.top_of``): no state-sized temporary.
    The torch reference keeps about eight states' worth of temporaries per parameter set
    and a dense float64 diagonal.
    """
    size = 2**n
    if kernels == "numba":
        m = n - 1 if symmetric and n >= 2 else n
        s, half = state_bytes(m, dtype), 2**m
        extra = (2 * layers - 1) * s if (2 * layers + 1) * s + 2 * half <= STORE_BUDGET else 0
        build = size * (4 + index_itemsize)
        return max(build, size * index_itemsize + 2 * half + (2 * s + extra))
    return batch * 8 * state_bytes(n, dtype) + size * (8 + 1 + index_itemsize + 4)


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
