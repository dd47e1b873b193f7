"""A job's seconds beyond its iterations: what the bill counts besides the work the model prices per iteration.

A job is billed from its start to its end. Besides its iterations (``model``, in units of
``counting.work_units``) it pays, on our engines:

- **the start-up** (``start``): the job process, its imports (numpy and numba; torch for QML),
  its kernels loaded from the cache, the data or graph, the result written, the end; measured
  once per machine as a whole, a tiny job start to end (``calibrate_job.measure_startup``);
- **compiling** the kernels when the kernel cache has none of them yet (a first job after an
  install or an upgrade): :data:`COMPILE_S`, measured here, scaled by one core's speed, and said
  in the notes;
- **QAOA's size**: the cost diagonal (one pass over ``2**n`` integers per edge, on one thread),
  the first sweep's buffers planned and faulted in, and the ending past its two forward passes
  (ranking the likeliest bitstrings, the answer), each at this machine's measured rate
  (``calibrate_job.measure_qaoa_parts``);
- **QML's buffers**: the layer's states, faulted in at the first step (one chunk's, or the
  evaluation's when larger), at the first-touch rate of buffers allocated as the layer's
  (``calibrate_qml.measure_touch``; a VM whose host took freed memory back pays 2-3 s/GB here, a
  temporary's 0.5) per rank, the ranks faulting theirs at once.

Every term scales with one core's speed on other machines (``model._core_ratio``). PennyLane
devices keep :data:`PENNYLANE_START_S` (their start-up was not measured).
"""
from __future__ import annotations

from dataclasses import dataclass

from qhybrid.estimate.model import _core_ratio

#: Seconds of a first job's compilation on an empty kernel cache, on this kind of 2-core machine
#: (2026-12-02, a fresh interpreter with an empty cache, CPU seconds of the first call: QAOA 23.8 s in
#: one process, of which the job's child compiles about half alongside (``numba_load.compile_ahead``);
#: QML 7.0 s at 4 wires, more kernels compiling at first use of a larger size). Not calibrated per machine.
COMPILE_S = {"qaoa": 15.0, "qml": 10.0}
PENNYLANE_START_S = 5.0  # interpreter, PennyLane and its device, the job runtime: not measured


@dataclass(frozen=True)
class Fixed:
    """A job's seconds that are not its iterations, by part (seconds on the row's machine)."""

    start: float
    compile: float = 0.0
    size: float = 0.0

    @property
    def seconds(self) -> float:
        return self.start + self.compile + self.size


def kernels_cached(workload: str, dtype: str = "complex128") -> bool:
    """Whether the kernel cache holds ``workload``'s kernels for ``dtype`` (what ``numba_load.compile_ahead``
    looks for; nothing is created or locked)."""
    from qhybrid import kernel_cache
    from qhybrid.workloads.numba_load import ENTRY_INDEX, QML_INDEXES

    indexes = (ENTRY_INDEX,) if workload == "qaoa" else QML_INDEXES
    folder = kernel_cache.cache_dir()
    try:
        return all(next(folder.glob(f"*/{index}"), None) is not None for index in indexes)
    except OSError:
        return False


def qaoa_size_seconds(n: int, edges: int, *, work, cal, core: float, problem: str = "maxcut") -> float:
    """The QAOA job's seconds that grow with its size beyond its iterations (see the module), on a machine
    ``core`` times as fast a core as this one. ``work``: one iteration's (``work.qaoa_work``)."""
    m = n - 1 if problem == "maxcut" and n >= 2 else n
    diagonal = cal.qaoa_diagonal_s * 2**n * max(1, edges)
    first = cal.qaoa_first_s_per_byte * work.working_set_bytes
    ending = cal.qaoa_ending_s * 2**m
    return (diagonal + first + ending) / core


def fixed_seconds(workload: str, machine, cal, *, settings=None, work=None, buffer_bytes: int = 0,
                  own_cache: bool = True) -> Fixed:
    """The job's seconds beyond its iterations on ``machine`` (:class:`Fixed`): our engines' start-up,
    the compilation when this machine's kernel cache lacks the kernels (``own_cache``: the row is
    this machine, or the job's own instance which shares nothing with it: only here is the cache
    known, elsewhere a warm cache is assumed), QAOA's size terms (``settings``, ``work``) and the
    QML layer's buffers (``buffer_bytes``) faulted in."""
    core = _core_ratio(machine, cal)
    start = (cal.job_start_qaoa_s if workload == "qaoa" else cal.job_start_qml_s) / core
    dtype = getattr(settings, "dtype", "complex128")
    compile_ = COMPILE_S[workload] / core if own_cache and not kernels_cached(workload, dtype) else 0.0
    if workload == "qaoa":
        size = qaoa_size_seconds(settings.n_nodes, settings.n_edges, work=work, cal=cal, core=core,
                                 problem=settings.problem)
    else:
        size = buffer_bytes / 1e9 * (cal.touch_s_per_gb or cal.fresh_s_per_gb) / core
    return Fixed(start=start, compile=compile_, size=size)
