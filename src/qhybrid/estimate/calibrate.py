"""This machine, measured once: memory bandwidth and a probe of each engine's kernels.

30-50 s on the shared 2-core AMD EPYC at load 4-6 (29, 43, 52 s measured; each timing counts
``min(wall-clock, the main thread's CPU time)``, so a calibration on a shared machine describes
the idle one: :func:`timings`): an in-place scale over a cache-resident and a DRAM-sized array
(the two bandwidths: a state smaller than the last-level cache streams at the first), the QAOA
job's iteration (energy+gradient and the Adam step) at 10 qubits with p = 1 and 3 and at 16
qubits (solved together for the per-iteration and per-kernel-call overheads and the one-thread
arithmetic rate) and at 18, 20, 22 (all-thread rates), the thread pool's dispatch per extra
thread, and a DressedQNN training step at five sizes (per-step overhead; arithmetic rate per
busy thread where threads, L2 and L3 change; :mod:`.calibrate_qml`). The result is cached as JSON in
``$QHYBRID_HOME/calibration.json`` (``~/.cache/qhybrid/calibration.json``
without QHYBRID_HOME), keyed by the CPU model and thread count, so local
predictions rest on this machine's own numbers; ``refresh=True`` measures again.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from qhybrid.errors import JobError
from qhybrid.estimate.hardware import (  # noqa: F401  (CACHE_GBS_PER_GHZ: re-exported, its old home)
    CACHE_GBS_PER_GHZ,
    PER_CORE_BANDWIDTH_GBS,
    Machine,
    cpu_model,
    local_l3_bytes,
    local_peak_gflops,
)
from qhybrid.estimate.work import qaoa_work
from qhybrid.devices import local_gpus
from qhybrid.jobs.instances import local_cores

VERSION = 9
QAOA_SMALL = ((10, 1), (10, 3), (16, 2))  # (qubits, p): overheads per iteration and per call; one-thread rate
QAOA_SIZES = (18, 20, 22)  # all threads, in and past L3 (p = 2)
CACHE_MIB = 4  # the cache-resident bandwidth's array: past L2, well inside L3 (at most a quarter of it)
DRAM_MIB = 128


@dataclass(frozen=True)
class Calibration:
    """This machine's measured figures (rates in GFLOP/s, times in seconds)."""

    key: str
    cpu_model: str
    cores: int
    peak_gflops: float
    core_ghz: float
    bandwidth_gbs: float  # DRAM, all threads
    thread_bandwidth_gbs: float  # DRAM, one thread (numpy's copies are serial)
    cache_bandwidth_gbs: float  # a last-level-cache-resident array, one thread
    qaoa_iteration_s: float  # per iteration: Python, parameter checks, the optimizer step
    qaoa_call_s: float  # per kernel call
    qaoa_serial_gflops: float
    qaoa_parallel_small_gflops: float  # all threads, at 18, 20 and 22 qubits (17, 19, 21 simulated)
    qaoa_parallel_gflops: float
    qaoa_parallel_large_gflops: float
    qml_step_s: float  # the job's training step less its kernels (torch on one thread, as the job sets it)
    qml_eval_s: float  # the job's evaluation after an epoch, less its kernels
    qml_small_gflops: float  # per busy thread, at 8, 10, 12 and 16 wires (batch 16)
    qml_mid_gflops: float
    qml_gflops: float
    qml_large_gflops: float
    pool_wake_s: float  # per kernel call on more than one thread (sim.pool.run_parts): the hand-off
    pool_submit_s: float  # and per extra thread
    fresh_s_per_gb: float  # a temporary past work.FRESH_MIN: mapped and page-faulted in at every call
    job_start_qaoa_s: float  # a tiny job, start to end as billed (.calibrate_job): what every job pays
    job_start_qml_s: float
    qaoa_diagonal_s: float  # the QAOA job's cost diagonal, per amplitude per edge (one thread)
    qaoa_first_s_per_byte: float  # its first sweep's extra time (buffers planned, faulted in), per buffer byte
    qaoa_ending_s: float  # its ending less two forward passes (ranking, answer), per simulated amplitude
    measured: str
    seconds: float
    nominal: bool = False  # True: not measured, this CPU's peak times the efficiencies of NOMINAL
    # the QAOA job's iteration (wall-clock, in a short real job) over the one measure_qaoa times, 1..cores
    # (.calibrate_job.measure_qaoa_in_job); 1 where not measured
    qaoa_job_factor: float = 1.0
    # per busy thread with the states past the last-level cache (calibrate_qml.measure_qml): the QML
    # rate past 16 wires there (model._qml_rate_per_thread); 0 where not measured (16 wires' is held)
    qml_huge_gflops: float = 0.0
    # the first touch of the QML layer's state buffers, per GB (calibrate_qml.measure_touch); 0 where not
    # measured (fresh_s_per_gb is taken)
    touch_s_per_gb: float = 0.0


def cache_path() -> Path:
    """Where calibrations are kept."""
    home = os.environ.get("QHYBRID_HOME")
    return Path(home) / "calibration.json" if home else Path.home() / ".cache" / "qhybrid" / "calibration.json"


def machine_key() -> str:
    """The cache key: CPU model, threads this process may use, model version."""

    return f"{cpu_model()} | {local_cores()} threads | v{VERSION}"


def isolated(function: str, *args):
    """Run ``qhybrid.estimate.<function>(*args)`` in a fresh interpreter; return its JSON result.

    Each probe gets a process of its own, as each job does: threads left spinning by one
    engine's pool (numba, OpenMP, torch) would otherwise slow the next one down.

    Raises:
        JobError: the probe failed (its last stderr line).
    """
    import subprocess
    import sys

    module, name = function.rsplit(".", 1)
    code = (f"import json, sys; from qhybrid.estimate.{module} import {name}; "
            f"print(json.dumps({name}(*json.loads(sys.argv[1]))))")
    proc = subprocess.run([sys.executable, "-c", code, json.dumps(list(args))], capture_output=True,
                          text=True, env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"})
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise JobError(f"estimate probe {function}{args} failed: {last}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def timings(fn, repeats: int = 3, *, cpu: str = "main") -> tuple[list[float], list[float]]:
    """Wall-clock and CPU seconds of ``repeats`` calls of ``fn()`` after a warm-up call.

    ``cpu="main"`` counts the calling thread's CPU time: in our engines the main thread runs the
    serial parts (autograd, the optimizer, Python) and its share of every parallel region, so on an
    idle machine its CPU time is the wall-clock, and on a shared one it leaves out the waiting for
    other processes (which an instance of our own would not do) where the process's CPU time
    divided by the threads would wrongly halve the serial parts. ``cpu="process"`` counts the whole
    process (PennyLane devices, whose threads we do not control).
    """
    clock = time.thread_time if cpu == "main" else time.process_time
    fn()  # warm: compile, fault pages in
    walls, cpus = [], []
    for _ in range(repeats):
        c, t = clock(), time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t)
        cpus.append(clock() - c)
    return walls, cpus


def _best(fn, repeats: int = 3, *, cpu: str = "main") -> float:
    """Best seconds of ``fn()`` as an idle machine would take them: ``min(wall-clock, CPU time)`` (:func:`timings`)."""
    walls, cpus = timings(fn, repeats, cpu=cpu)
    return min(min(walls), min(cpus))


def measure_bandwidth(mib: int = DRAM_MIB, threads: int = 1) -> float:
    """GB/s of an in-place scale (read + write) over ``mib`` MiB, cut between ``threads`` threads
    (``sim.pool.run_parts``: numpy's ufuncs release the GIL, so the slices run side by side)."""
    import numpy as np

    from qhybrid.sim.pool import run_parts, slices

    a = np.ones(max(1, mib * 2**20 // 8))
    parts = [(a[s], 1.0000001, a[s]) for s in slices(a.size, threads)]
    seconds = _best(lambda: run_parts(np.multiply, parts), repeats=5)
    return 2 * a.nbytes / seconds / 1e9


def cache_mib() -> int:
    """The cache-resident bandwidth's array: CACHE_MIB, or a quarter of a smaller last-level cache."""

    return max(1, min(CACHE_MIB, local_l3_bytes() // 4 // 2**20))


def nonnegative_fit(cols, seconds) -> list[float]:
    """Least squares ``seconds ~ cols @ x`` with ``x >= 0``: a negative term is dropped and the rest refitted."""
    import numpy as np

    cols, t = np.asarray(cols, dtype=float), np.asarray(seconds, dtype=float)
    keep = list(range(cols.shape[1]))
    while True:
        coef, *_ = np.linalg.lstsq(cols[:, keep], t, rcond=None)
        if (coef >= 0).all() or len(keep) == 1:
            out = [0.0] * cols.shape[1]
            for k, v in zip(keep, coef):
                out[k] = max(0.0, float(v))
            return out
        keep.pop(int(np.argmin(coef)))


def qaoa_iteration(n: int, layers: int):
    """``step()``: one iteration of the QAOA job's loop on gnm(n, 1.5 n): energy+gradient and an Adam step."""
    import networkx as nx

    from qhybrid.qaoa import QAOA
    from qhybrid.workloads import qaoa_optimize as opt

    q = QAOA(nx.gnm_random_graph(n, int(1.5 * n), seed=1967))
    box = {"params": opt.seed_start(layers, 0), "state": {}}

    def step():
        _, grad = q.energy_and_grad(box["params"])
        box["params"], box["state"] = opt.step("adam", box["params"], grad, box["state"], 0.1)

    return step


def qaoa_figures(times: dict) -> tuple[float, ...]:
    """``(per-iteration s, per-call s, one-thread GFLOP/s, all-thread GFLOP/s at 18, 20, 22 qubits)`` from the
    seconds of each ``(n, p)`` point: ``t = iteration + calls x call + flops / rate`` solved over QAOA_SMALL
    (least squares, no negative term), then each larger point's rate from its time less the overheads."""
    works = [qaoa_work(n, p) for n, p in QAOA_SMALL]
    iteration, call, per_flop = nonnegative_fit([[1.0, w.calls, w.flops] for w in works],
                                                [times[k] for k in QAOA_SMALL])
    if per_flop <= 0:  # the arithmetic lost to noise: the largest point's time, overheads taken off
        w = works[-1]
        per_flop = max(1e-12, times[QAOA_SMALL[-1]] - iteration - call * w.calls) / w.flops
    rates = [(w := qaoa_work(n, 2)).flops / max(1e-9, times[(n, 2)] - iteration - call * w.calls) / 1e9
             for n in QAOA_SIZES]
    return (iteration, call, 1 / per_flop / 1e9, *rates)


def measure_qaoa() -> tuple[float, ...]:
    """:func:`qaoa_figures` of the QAOA job's iteration (:func:`qaoa_iteration`) timed at each point."""
    points = [*QAOA_SMALL, *((n, 2) for n in QAOA_SIZES)]
    times = {k: float("inf") for k in points}
    for k in points * 2:  # two rounds, the best of each point
        times[k] = min(times[k], _best(qaoa_iteration(*k), repeats=5))
    return qaoa_figures(times)


def measure_dispatch() -> tuple[float, float]:
    """Seconds a ``sim.pool.run_parts`` call adds on more than one thread: ``(hand-off, per extra thread)``,
    from calls of trivial parts on 1, 2 and 8 threads (the pool threads need not have cores of their own)."""
    from qhybrid.sim.pool import run_parts

    def quartile(parts: int, calls: int = 400) -> float:  # the lower quartile of single calls' wall-clock:
        args = [()] * parts  # a hand-off is mostly waiting, which no CPU clock counts, and a loaded
        run_parts(int, args)  # machine's delays (the other thread not scheduled) land in the upper part
        times = []
        for _ in range(calls):
            t = time.perf_counter()
            run_parts(int, args)
            times.append(time.perf_counter() - t)
        return sorted(times)[calls // 4]

    one, two, eight = quartile(1), quartile(2), quartile(8)
    submit = max(0.0, (eight - two) / 6)
    return max(0.0, two - one - submit), submit


def _read_cache(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def store(key: str, entry: dict) -> None:
    """Add ``entry`` under ``key`` to the cache file: under a lock, re-read, then replaced atomically, so
    two estimates calibrating or probing at once keep each other's entries."""
    import fcntl
    import tempfile

    path = cache_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        cached = _read_cache(path)
        cached[key] = entry
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".calibration-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(cached, indent=1))
        os.replace(tmp, path)


def cached_calibration() -> Calibration | None:
    """This machine's cached calibration, or None (nothing is measured)."""
    entry = _read_cache(cache_path()).get(machine_key())
    names = {f.name for f in fields(Calibration)}
    return Calibration(**entry) if isinstance(entry, dict) and set(entry) == names else None


# a calibration's figures as fractions of its machine's peak (rates) or times at its core clock
# (overheads), measured on the 2-core AMD EPYC of benchmarks/estimate.py (2026-12-01): what
# ``nominal_calibration`` assumes of a machine that was not measured
NOMINAL = {
    "qaoa_serial_gflops": 0.090, "qaoa_parallel_small_gflops": 0.094, "qaoa_parallel_gflops": 0.131,
    "qaoa_parallel_large_gflops": 0.153, "qml_small_gflops": 0.094, "qml_mid_gflops": 0.125,
    "qml_gflops": 0.148, "qml_large_gflops": 0.248,  # per busy thread: fractions of one core's peak
    "qml_huge_gflops": 0.186,  # 0.75 x the 16-wire rate, as past the L3 on the 2-core Xeon of 2026-12-02
    "qaoa_iteration_s": 9e-5, "qaoa_call_s": 1.1e-5, "qml_step_s": 3.4e-3, "qml_eval_s": 1.2e-3, "pool_wake_s": 3e-5,
    "pool_submit_s": 6e-6, "fresh_s_per_gb": 1.2, "job_start_qaoa_s": 1.6, "job_start_qml_s": 3.5,
    "touch_s_per_gb": 0.4,  # ~ a 4 KiB first touch on the 2-core Xeon (0.32 s/GB); its VM's huge pages took 2-2.7
    "qaoa_diagonal_s": 2.5e-9, "qaoa_first_s_per_byte": 5e-10, "qaoa_ending_s": 6e-8,
}
NOMINAL_GHZ = 2.45
PER_THREAD = ("qml_small_gflops", "qml_mid_gflops", "qml_gflops", "qml_large_gflops", "qml_huge_gflops",
              "qaoa_serial_gflops")


def nominal_calibration() -> Calibration:
    """This machine's figures WITHOUT measuring: its peak (vector flags, clock) times :data:`NOMINAL`'s
    efficiencies, overheads scaled by the clock, bandwidths per core (``nominal=True``; instant)."""

    cores = local_cores()
    peak = local_peak_gflops(cores)
    ghz = peak / cores / 16
    figures = {k: v * (peak / cores if k in PER_THREAD else peak) if k.endswith("gflops") else v * NOMINAL_GHZ / ghz
               for k, v in NOMINAL.items()}
    return Calibration(key=machine_key(), cpu_model=cpu_model(), cores=cores, peak_gflops=peak, core_ghz=ghz,
                       bandwidth_gbs=PER_CORE_BANDWIDTH_GBS * cores, thread_bandwidth_gbs=PER_CORE_BANDWIDTH_GBS,
                       cache_bandwidth_gbs=CACHE_GBS_PER_GHZ * ghz,
                       measured="", seconds=0.0, nominal=True, **figures)


def local_calibration(*, refresh: bool = False) -> Calibration:
    """This machine's calibration: from the cache, or measured now (a few seconds) and cached.

    Args:
        refresh: measure again even when a calibration of this machine is cached.
    """
    from datetime import datetime, timezone


    key = machine_key()
    found = None if refresh else cached_calibration()
    if found is not None:
        return found
    began = time.perf_counter()
    cores = local_cores()
    bandwidth, one = measure_bandwidth(DRAM_MIB, cores), measure_bandwidth(DRAM_MIB)
    cache = measure_bandwidth(cache_mib())
    iteration, call, serial, parallel_small, parallel, parallel_large = isolated("calibrate.measure_qaoa")
    wake, submit = isolated("calibrate.measure_dispatch")
    step_s, qml_small, qml_mid, qml_rate, qml_large, eval_s, fresh, qml_huge, touch = isolated(
        "calibrate_qml.measure_qml", wake, submit, cache, one)
    diagonal, first, ending = isolated("calibrate_job.measure_qaoa_parts")
    start_qaoa, start_qml = isolated("calibrate_job.measure_startup", "qaoa"), isolated("calibrate_job.measure_startup", "qml")
    job_factor = isolated("calibrate_job.measure_qaoa_in_job")
    peak = local_peak_gflops(cores)
    cal = Calibration(
        key=key, cpu_model=cpu_model(), cores=cores, peak_gflops=peak, core_ghz=peak / cores / 16,
        bandwidth_gbs=bandwidth, thread_bandwidth_gbs=one, cache_bandwidth_gbs=cache, qaoa_iteration_s=iteration, qaoa_call_s=call,
        qaoa_serial_gflops=serial,
        qaoa_parallel_small_gflops=parallel_small, qaoa_parallel_gflops=parallel,
        qaoa_parallel_large_gflops=parallel_large,
        qml_step_s=step_s, qml_eval_s=eval_s, qml_small_gflops=qml_small, qml_mid_gflops=qml_mid, qml_gflops=qml_rate, qml_large_gflops=qml_large,
        qml_huge_gflops=qml_huge, touch_s_per_gb=touch, pool_wake_s=wake,
        pool_submit_s=submit, fresh_s_per_gb=fresh, job_start_qaoa_s=start_qaoa, job_start_qml_s=start_qml,
        qaoa_diagonal_s=diagonal, qaoa_first_s_per_byte=first, qaoa_ending_s=ending, qaoa_job_factor=job_factor,
        measured=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        seconds=time.perf_counter() - began,
    )
    store(key, asdict(cal))
    return cal


def local_machine(calibration) -> Machine:
    """This machine, with the measured figures of ``calibration`` (None: the nominal ones, not measured)."""
    cores = local_cores()
    try:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # pragma: no cover
        memory = 0
    if calibration is None:
        calibration = nominal_calibration()
    return Machine(name="local", vcpus=cores, cores=cores, memory_bytes=int(memory),
                   peak_gflops=calibration.peak_gflops, bandwidth_gbs=calibration.bandwidth_gbs,
                   l3_bytes=local_l3_bytes(), thread_bandwidth_gbs=calibration.thread_bandwidth_gbs,
                   cache_bandwidth_gbs=calibration.cache_bandwidth_gbs, gpus=local_gpus())
