"""Memory estimates and the check made before any state is allocated.

``required_bytes(n, batch=..., dtype=..., n_states=...)`` is what a run needs;
``available_bytes(device)`` reads ``MemAvailable`` from ``/proc/meminfo`` on
Linux CPUs (no psutil; a reading under a second old answers requests of at most a quarter
of it) and ``torch.cuda.mem_get_info`` on CUDA;
``check_memory(...)`` raises :class:`~qhybrid.errors.MemoryLimitError` naming both.
torch is imported only for a CUDA device or a torch dtype's size (a CPU check is arithmetic
and ``/proc``, so the CLI's pre-flight and the numba QAOA path stay torch-free).
"""
from __future__ import annotations

import time

from ..errors import MemoryLimitError

#: bytes per amplitude, by dtype name (``"complex128"``, ``torch.complex128`` and numpy's alike)
ITEMSIZE = {"complex128": 16, "complex64": 8, "float64": 8, "float32": 4}


def itemsize(dtype) -> int:
    """Bytes per element of ``dtype``: a name, a numpy dtype or a torch dtype."""
    name = str(dtype).replace("torch.", "")
    if name in ITEMSIZE:
        return ITEMSIZE[name]
    import torch

    return torch.empty((), dtype=dtype).element_size()


def _device_type(device) -> str:
    return getattr(device, "type", None) or str(device).split(":", 1)[0]


def required_bytes(n_wires: int, *, batch: int = 1, dtype="complex128", n_states: int = 2) -> int:
    """Bytes for ``n_states`` state vectors of ``batch`` rows of ``2**n_wires`` amplitudes."""
    return int(n_states) * int(batch) * (2**int(n_wires)) * itemsize(dtype)


#: Seconds a ``/proc/meminfo`` reading answers a small request (see :func:`available_bytes`).
READING_TTL = 1.0
#: A reading is reused only for requests of at most this fraction of it.
READING_MARGIN = 0.25

_last_reading = [float("-inf"), None]  # (time.monotonic(), bytes) of the last /proc/meminfo read


def available_bytes(device="cpu", *, needed: int | None = None) -> int | None:
    """Free memory on ``device`` in bytes, or None when it cannot be read.

    On a CPU, a caller that says what it ``needed`` gets the last ``/proc/meminfo`` reading when
    it is under ``READING_TTL`` seconds old and ``needed`` is at most ``READING_MARGIN`` of it (a
    small circuit's call checks several times; a request near the limit always reads afresh)."""
    if _device_type(device) == "cuda":
        import torch

        free, _ = torch.cuda.mem_get_info(torch.device(device))
        return int(free)
    at, free = _last_reading
    now = time.monotonic()
    if needed is not None and free is not None and now - at < READING_TTL and needed <= READING_MARGIN * free:
        return free
    free = _read_meminfo()
    _last_reading[:] = (now, free)
    return free


def _read_meminfo() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:  # pragma: no cover (not Linux)
        return None
    return None


def _fmt(n: int) -> str:
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


def check_memory(n_wires: int, *, batch: int = 1, dtype="complex128", n_states: int = 2,
                 device="cpu", available: int | None = None) -> int:
    """Raise MemoryLimitError when the run would not fit; return the estimate in bytes."""
    need = required_bytes(n_wires, batch=batch, dtype=dtype, n_states=n_states)
    free = available if available is not None else available_bytes(device, needed=need)
    if free is not None and need > free:
        raise MemoryLimitError(
            f"simulating {n_wires} qubits (batch {batch}, {str(dtype).replace('torch.', '')}, "
            f"{n_states} state buffers) needs {_fmt(need)} but only {_fmt(free)} is available on "
            f"{device}; use fewer wires, a smaller batch or c_dtype=complex64"
        )
    return need
