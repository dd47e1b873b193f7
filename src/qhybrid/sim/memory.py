"""Memory estimates and the check made before any state is allocated.

``required_bytes(n, batch=..., dtype=..., n_states=...)`` is what a run needs;
``available_bytes(device)`` reads ``MemAvailable`` from ``/proc/meminfo`` on
Linux CPUs (no psutil; a reading under a second old answers requests of at most a quarter
of it) and ``torch.cuda.mem_get_info`` on CUDA;
``check_memory(...)`` raises :class:`~qhybrid.errors.MemoryLimitError` naming both;
``chunk_size(...)`` cuts a batch into the chunks that fit (the QML layer, its estimate).
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
    if n >= 2**30:
        return f"{n / 2**30:.2f} GiB"
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n / 2**10:.1f} KiB"


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


#: Full states one sample of a QML chunk holds (``qml.adjoint``), by kernel and whether gradients are
#: wanted: numba keeps a planar ``psi`` and a planar ``lambda`` (the factor gradients reuse both);
#: torch keeps ``psi``, a scratch and ``lambda``, and its factor gradients allocate about two more;
#: Triton keeps the same three buffers and allocates none in its kernels (one state of headroom
#: for the layer's small torch steps on them: ``rho``'s product may resolve the conjugate view).
QML_STATES_PER_SAMPLE = {("numba", False): 2, ("numba", True): 2, ("torch", False): 2, ("torch", True): 5,
                         ("triton", False): 3, ("triton", True): 4}

#: Bytes of state buffers a chunked batch call may hold at once by default: a few full states at
#: 26 wires (four of 2**26 complex128), the whole batch of a small circuit.
CHUNK_BYTES = 4 << 30
#: Share of the free memory a chunk may take; the rest is left for the process's own growth
#: (autograd's small tensors, the allocator, the other threads' stacks).
FREE_SHARE = 0.8


def chunk_size(n_wires: int, *, batch: int, dtype="complex128", states_per_sample: int = 2,
               device="cpu", available: int | None = None, held: int = 0, max_samples: int | None = None,
               share: float = 1.0, budget: int = CHUNK_BYTES) -> int:
    """How many samples of a batch one engine call simulates at once: the most whose state buffers
    (``states_per_sample`` states each) fit both ``budget`` and ``FREE_SHARE`` of this process's
    ``share`` of the free memory, at most ``batch`` and ``max_samples`` (a user's cap), at least 1.

    Args:
        n_wires: wires of each sample's state.
        batch: samples of the call.
        dtype: the states' complex dtype.
        states_per_sample: full states one sample holds during the call.
        device: where the states live (whose free memory counts).
        available: free bytes to use instead of reading the device (the estimate's instance memory).
        held: bytes the caller already holds and will reuse (its kept buffers count as free).
        max_samples: the user's cap on samples per call (None: no cap).
        share: this process's share of the device (1 / processes sharing it: data-parallel ranks).
        budget: the most bytes of states at once (:data:`CHUNK_BYTES`).

    Returns:
        The chunk, ``1 <= chunk <= batch``.

    Raises:
        MemoryLimitError: when even one sample's states do not fit, naming the size, the memory
            one sample needs and what is free.
    """
    per_sample = required_bytes(n_wires, batch=1, dtype=dtype, n_states=states_per_sample)
    free = available if available is not None else available_bytes(device)
    limit = int(budget)
    if free is not None:
        usable = int((free + held) * share * FREE_SHARE)
        if per_sample > usable:
            part = "" if share >= 1 else f" (this process's share {share:.2g} of it)"
            raise MemoryLimitError(
                f"{n_wires} wires ({str(dtype).replace('torch.', '')}) need {_fmt(per_sample)} per sample "
                f"({states_per_sample} states of {_fmt(per_sample // states_per_sample)}) but only "
                f"{_fmt(int((free + held) * share))} is free on {device}{part}, of which "
                f"{FREE_SHARE:.0%} may hold states; use fewer wires, dtype complex64 or a machine with more memory")
        limit = min(limit, usable)
    chunk = max(1, min(int(batch), limit // per_sample))
    if max_samples is not None:
        chunk = min(chunk, max(1, int(max_samples)))
    return chunk
