"""Seconds per iteration of a :class:`~qhybrid.estimate.work.Work` on a :class:`~qhybrid.estimate.hardware.Machine`.

CPU (our numba engines): ``overheads + max(arithmetic, memory)``. The arithmetic
rate is this machine's measured one (:mod:`.calibrate`) scaled by the ratio of
peak figures (per core for a one-thread sweep, all cores else); the memory term
streams the bytes at the bandwidth of the working set's home: the last-level
cache (one thread's cache-resident bandwidth times the busy threads) when it
fits, DRAM past it. The overheads (QAOA: per iteration and per kernel call; QML:
the fixed step and a thread hand-off per extra thread per call) scale with one
core's speed; QML's serial planar copies run at one thread's bandwidth. A QML
job also evaluates its held-out samples after every epoch (the forward pass),
at the step's rates with a fixed part of its own. Both run in chunks that fit memory
(``sim.memory.chunk_size``): the kernel calls and their hand-offs repeat per chunk, and
a chunk's batch decides the busy threads.

GPU (torch on CUDA): ``launches x LAUNCH_S + max(bytes / (GPU bandwidth x
GPU_BW_EFFICIENCY), flops / (peak x GPU_FLOP_EFFICIENCY))`` - an uncalibrated
model (no GPU measured yet), labelled so in the estimate's notes.

Data parallel: each rank computes its local batch; a ring all-reduce of the
parameters adds ``2 (W - 1) / W x bytes / link + 2 (W - 1) x latency``, over
the GPUs' link within one instance and the network between instances.
"""
from __future__ import annotations

from qhybrid.estimate.work import qml_split

LAUNCH_S = 10e-6
GPU_BW_EFFICIENCY = 0.75
GPU_FLOP_EFFICIENCY = 0.5
ALLREDUCE_LATENCY_S = {"intra": 30e-6, "network": 100e-6}
STEP_OVERHEAD_GPU_S = 3e-3  # autograd, Adam and the classical layers of one step, on the host


def _core_ratio(machine, cal) -> float:
    """How much faster one core of ``machine`` is than one core here."""
    return machine.core_gflops / max(1e-9, cal.peak_gflops / cal.cores)


def _between(x: float, x0: float, y0: float, x1: float, y1: float) -> float:
    """Linear interpolation of a measured rate, held at the ends."""
    if x <= x0:
        return y0
    if x >= x1:
        return y1
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)


def _memory_seconds(bytes_, working_set, machine, threads: int = 1) -> float:
    """``bytes_`` streamed from the cache (``threads`` x one thread's cache-resident bandwidth) when
    ``working_set`` fits the last-level cache, else from DRAM (all threads)."""
    if working_set <= machine.l3_bytes:
        return bytes_ / (machine.cache_bandwidth_gbs * max(1, threads) * 1e9)
    return bytes_ / (machine.bandwidth_gbs * 1e9)


#: ``(simulated qubits, factor)``: past the calibration's largest point (21 simulated qubits), one energy+gradient's
#: measured time per simulated amplitude over what its flop count at the rate measured at 21 says, p = 2 (the job's):
#: ``(t(m) / 2**m) / (t(21) / 2**21)`` over ``(flops(m) / 2**m) / (flops(21) / 2**21)``. The flop count's
#: un-apply sweep (past 23 simulated qubits at p = 2: the stored states no longer fit ``STORE_BUDGET``)
#: counts twice the backward butterflies, which cost less than that; the larger blocks past 23 (``qaoa.sweep.HIGH_BITS``)
#: make the low passes dearer. Measured on the 2-core Xeon, 2026-12-02, ``benchmarks/qaoa_passes.py``
#: (22 nodes 33.6 and 32.9 ns per amplitude in two runs; 24: 36.2, 25: 42.0, 26: 41.8, 27: 52.3, 28: 52.8,
#: 29: 53.7, each over its own run's 22), interpolated, held past the last point (30 nodes: not measured).
QAOA_LARGE_FACTOR = ((21, 1.0), (23, 1.0), (24, 0.79), (25, 0.74), (26, 0.92), (27, 0.88), (28, 0.87))


def qaoa_large_factor(simulated_qubits: int) -> float:
    """:data:`QAOA_LARGE_FACTOR` at ``simulated_qubits`` (1 up to 21; linear between the points, held after)."""
    points = QAOA_LARGE_FACTOR
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if simulated_qubits <= x1:
            return _between(simulated_qubits, x0, y0, x1, y1)
    return points[-1][1]


def qaoa_cpu_seconds(work, machine, cal, *, simulated_qubits: int) -> float:
    """One QAOA energy+gradient with the fused numba sweep (one thread up to 16 simulated qubits; past 21
    simulated qubits the arithmetic scaled by :func:`qaoa_large_factor`)."""
    from qhybrid.qaoa.memory import SERIAL_BITS

    core = _core_ratio(machine, cal)
    serial = simulated_qubits <= SERIAL_BITS
    if serial:
        rate = cal.qaoa_serial_gflops * core
    else:  # measured at 17, 19 and 21 simulated qubits (18, 20 and 22 Max-Cut nodes)
        here = (_between(simulated_qubits, 17, cal.qaoa_parallel_small_gflops, 19, cal.qaoa_parallel_gflops)
                if simulated_qubits <= 19 else
                _between(simulated_qubits, 19, cal.qaoa_parallel_gflops, 21, cal.qaoa_parallel_large_gflops))
        rate = here * machine.peak_gflops / cal.peak_gflops
    compute = work.flops / (rate * 1e9) * qaoa_large_factor(simulated_qubits)
    memory = _memory_seconds(work.bytes, work.working_set_bytes, machine, 1 if serial else machine.cores)
    return (cal.qaoa_iteration_s + work.calls * cal.qaoa_call_s) / core + max(compute, memory)


def _qml_rate_per_thread(cal, n_wires: int, *, past_cache: bool = False) -> float:
    """This machine's DressedQNN GFLOP/s per busy thread at ``n_wires``: log-interpolated between the
    sizes measured (8, 10, 12, 16 wires), held beyond them; past 16 wires with the chunk's states
    larger than the last-level cache (``past_cache``), the rate measured there (``qml_huge_gflops``,
    :func:`qhybrid.estimate.calibrate_qml.rate_per_thread`) where it is measured and lower."""
    import math

    points = ((8, cal.qml_small_gflops), (10, cal.qml_mid_gflops), (12, cal.qml_gflops), (16, cal.qml_large_gflops))
    if n_wires <= points[0][0]:
        return points[0][1]
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if n_wires <= x1:
            return math.exp(_between(n_wires, x0, math.log(max(y0, 1e-9)), x1, math.log(max(y1, 1e-9))))
    huge = cal.qml_huge_gflops
    return min(points[-1][1], huge) if past_cache and huge > 0 else points[-1][1]


def qml_fixed_seconds(work, *, n_wires: int, batch: int, threads: int, wake_s: float, submit_s: float,
                      cache_gbs: float, dram_gbs: float, l3_bytes: int, fresh_s_per_gb: float = 0.0,
                      forward: bool = False, chunks: int = 1) -> float:
    """Seconds of a DressedQNN step that do not shrink with threads, beyond the fixed step: the thread
    hand-offs (per call on more than one busy thread ``wake_s`` plus ``submit_s`` per extra one;
    :func:`~qhybrid.estimate.work.qml_split` counts the calls of one chunk, ``batch`` samples, of the
    ``chunks``; ``forward``: an evaluation's) and
    the serial planar copies at one thread's bandwidth (cache-resident or DRAM by the batch's working set),
    and the fresh temporaries' page faults (``fresh_s_per_gb``)."""
    busy, calls = qml_split(n_wires, batch, threads, forward=forward)
    copies = work.serial_bytes / ((cache_gbs if work.working_set_bytes <= l3_bytes else dram_gbs) * 1e9)
    fresh = work.fresh_bytes / 1e9 * fresh_s_per_gb
    return (chunks * calls * (wake_s + (busy - 1) * submit_s) if busy > 1 else 0.0) + copies + fresh


def _qml_cpu(work, machine, cal, *, batch: int, n_wires: int, cores: int | None, overhead_s: float,
             forward: bool, chunk: int | None = None) -> float:
    core = _core_ratio(machine, cal)
    threads = cores or machine.cores
    chunk = min(batch, chunk or batch)
    busy, _ = qml_split(n_wires, chunk, threads, forward=forward)
    fixed = qml_fixed_seconds(work, n_wires=n_wires, batch=chunk, threads=threads,
                              wake_s=cal.pool_wake_s / core, submit_s=cal.pool_submit_s / core,
                              cache_gbs=machine.cache_bandwidth_gbs,
                              dram_gbs=machine.thread_bandwidth_gbs, l3_bytes=machine.l3_bytes,
                              fresh_s_per_gb=cal.fresh_s_per_gb / core, forward=forward, chunks=-(-batch // chunk))
    per_sample_set = work.working_set_bytes // max(1, chunk)
    rate = _qml_rate_per_thread(cal, n_wires, past_cache=per_sample_set * busy > machine.l3_bytes) * core * busy
    memory = _memory_seconds(work.bytes - work.serial_bytes, per_sample_set * busy, machine, busy)
    return overhead_s / core + fixed + max(work.flops / (rate * 1e9), memory)


def qml_cpu_seconds(work, machine, cal, *, batch: int, n_wires: int, cores: int | None = None,
                    chunk: int | None = None) -> float:
    """One DressedQNN step on ``batch`` local samples: the fixed step (autograd, Adam, the classical
    layers; scaled by one core's speed), the hand-offs and serial copies (:func:`qml_fixed_seconds`),
    plus the arithmetic at the measured rate per busy thread times the threads the kernels keep busy
    with ``cores`` (:func:`~qhybrid.estimate.work.qml_split`), or the gate passes' memory if slower."""
    return _qml_cpu(work, machine, cal, batch=batch, n_wires=n_wires, cores=cores, overhead_s=cal.qml_step_s,
                    forward=False, chunk=chunk)


def qml_eval_cpu_seconds(work, machine, cal, *, samples: int, n_wires: int, cores: int | None = None,
                         chunk: int | None = None) -> float:
    """The job's evaluation after an epoch (:func:`~qhybrid.estimate.work.qml_eval_work`: the forward pass on
    ``samples`` held-out samples in one batch): the fixed part of an evaluation (``cal.qml_eval_s``), its
    hand-offs and copies, and its arithmetic at the step's measured rate per busy thread (or its memory)."""
    return _qml_cpu(work, machine, cal, batch=samples, n_wires=n_wires, cores=cores, overhead_s=cal.qml_eval_s,
                    forward=True, chunk=chunk)


def gpu_seconds(work, machine, *, overhead_s: float = 0.0) -> float:
    """One iteration of the torch engine on one GPU of ``machine``."""
    peak = machine.gpu_fp64_gflops if work.dtype == "complex128" else machine.gpu_fp32_gflops
    memory = work.bytes / (machine.gpu_bandwidth_gbs * 1e9 * GPU_BW_EFFICIENCY)
    compute = work.flops / (peak * 1e9 * GPU_FLOP_EFFICIENCY)
    return overhead_s + work.calls * LAUNCH_S + max(memory, compute)


def allreduce_seconds(params: int, *, world: int, instance_count: int, machine, gpu: bool) -> float:
    """A ring all-reduce of ``params`` float64 gradients over ``world`` ranks on ``instance_count`` instances."""
    if world <= 1:
        return 0.0
    nbytes = 8 * params
    if instance_count > 1:
        link, latency = machine.network_gbs, ALLREDUCE_LATENCY_S["network"]
    else:
        link = machine.gpu_link_gbs if gpu else machine.bandwidth_gbs
        latency = ALLREDUCE_LATENCY_S["intra"]
    return 2 * (world - 1) / world * nbytes / (link * 1e9) + 2 * (world - 1) * latency
