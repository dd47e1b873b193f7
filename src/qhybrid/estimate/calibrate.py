"""This machine, measured once: memory bandwidth and a probe of each engine's kernels.

A few seconds (each timing counts ``min(wall-clock, the main thread's CPU time)``, so a
calibration on a shared machine describes the idle one: :func:`timings`): an in-place scale
over a 128 MiB array (bandwidth), the QAOA energy+gradient at four small sizes (per-call
overhead, one-thread and all-thread arithmetic rates) and a DressedQNN training step at five
sizes (per-step overhead; arithmetic rate per busy thread where threads, L2 and L3 change). The result is cached as JSON in
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

from qhybrid.estimate.work import qaoa_work, qml_work

VERSION = 4
QAOA_SIZES = (10, 16, 18, 20, 22)  # overhead; one thread (m <= 16 runs serially); all threads in and past L3
QML_SIZES = (4, 8, 10, 12, 16)  # overhead; rates where threads (10), L2 and L3 change
QML_BATCH = 16


@dataclass(frozen=True)
class Calibration:
    """This machine's measured figures (rates in GFLOP/s, times in seconds)."""

    key: str
    cpu_model: str
    cores: int
    peak_gflops: float
    core_ghz: float
    bandwidth_gbs: float
    qaoa_call_s: float
    qaoa_serial_gflops: float
    qaoa_parallel_small_gflops: float  # all threads, at 18, 20 and 22 qubits (17, 19, 21 simulated)
    qaoa_parallel_gflops: float
    qaoa_parallel_large_gflops: float
    qml_step_s: float
    qml_small_gflops: float  # per busy thread, at 8, 10, 12 and 16 wires (batch 16)
    qml_mid_gflops: float
    qml_gflops: float
    qml_large_gflops: float
    measured: str
    seconds: float


def cache_path() -> Path:
    """Where calibrations are kept."""
    home = os.environ.get("QHYBRID_HOME")
    return Path(home) / "calibration.json" if home else Path.home() / ".cache" / "qhybrid" / "calibration.json"


def machine_key() -> str:
    """The cache key: CPU model, threads this process may use, model version."""
    from qhybrid.estimate.hardware import cpu_model
    from qhybrid.jobs.instances import local_cores

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

    from qhybrid.errors import JobError

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


def measure_bandwidth(mib: int = 128) -> float:
    """GB/s of an in-place scale (read + write) over ``mib`` MiB."""
    import numpy as np

    a = np.ones(mib * 2**20 // 8)
    seconds = _best(lambda: np.multiply(a, 1.0000001, out=a))  # one thread: numpy's ufuncs are serial
    return 2 * a.nbytes / seconds / 1e9


def measure_qaoa() -> tuple[float, ...]:
    """Per-call overhead (s), one-thread GFLOP/s and all-thread GFLOP/s at 18, 20 and 22 qubits of the QAOA sweep."""
    import networkx as nx

    from qhybrid.qaoa import QAOA

    params = [[0.3, 0.5], [0.4, 0.2]]
    times = {n: float("inf") for n in QAOA_SIZES}
    for n in QAOA_SIZES * 2:  # two rounds, the best of each size
        q = QAOA(nx.gnm_random_graph(n, int(1.5 * n), seed=1967))
        times[n] = min(times[n], _best(lambda q=q: q.energy_and_grad(params), repeats=5))
    lo, mid = (qaoa_work(n, 2) for n in QAOA_SIZES[:2])
    serial = mid.flops / times[QAOA_SIZES[1]]
    call = max(0.0, (times[QAOA_SIZES[0]] - lo.flops / serial) / lo.calls)
    rates = [(w := qaoa_work(n, 2)).flops / max(1e-9, times[n] - call * w.calls) / 1e9 for n in QAOA_SIZES[2:]]
    return (call, serial / 1e9, *rates)


def qml_step(model, batch: int):
    """``step()``: one Adam training step of ``model`` on a fixed random batch of Sonar-shaped inputs."""
    import torch

    from qhybrid.qml import margin_loss

    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    x = torch.rand(batch, 60, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    y = (torch.arange(batch) % 2 * 2 - 1).to(torch.float64)

    def step():
        opt.zero_grad()
        margin_loss(model(x), y).backward()
        opt.step()

    return step


def qml_threads(n_wires: int, batch: int, cores: int) -> int:
    """Threads the DressedQNN kernels keep busy: all of them once a call covers ``PARALLEL_MIN``
    amplitudes (the batched kernels' ``(B, 2, 2**n)`` planes), else one (``sim/pool.py``'s rule)."""
    from qhybrid.sim.pool import threads_for

    return threads_for(batch * 2 * 2**n_wires, threads=cores)


def measure_qml() -> tuple[float, ...]:
    """Per-step overhead (s) and GFLOP/s per busy thread at 8, 10, 12 and 16 wires of a DressedQNN step (batch 16).

    The overhead (autograd, Adam, the classical layers: about the same at any size) is the step
    at 4 wires; each rate is the rest of a step's time over its arithmetic, divided by the threads
    the kernels kept busy (one at 8 wires, all from 10: ``qml_threads``), so the model can give an
    instance's cores and another batch the threads they would get.
    """
    import torch

    from qhybrid.jobs.instances import local_cores
    from qhybrid.qml import DressedQNN

    times = {n: float("inf") for n in QML_SIZES}
    for n in QML_SIZES * 2:  # two rounds, the best of each size: one noisy moment does not stick
        step = qml_step(DressedQNN(n, generator=torch.Generator().manual_seed(0)), QML_BATCH)
        times[n] = min(times[n], _best(step, repeats=5))
    tiny = qml_work(QML_SIZES[0], QML_BATCH)
    first = qml_work(QML_SIZES[1], QML_BATCH)
    rate = first.flops / max(1e-9, times[QML_SIZES[1]] - times[QML_SIZES[0]])  # the smallest state's own rate
    step_s = max(0.0, times[QML_SIZES[0]] - tiny.flops / rate)
    rates = []
    for n in QML_SIZES[1:]:
        busy = qml_threads(n, QML_BATCH, local_cores())
        rates.append(qml_work(n, QML_BATCH).flops / max(1e-9, times[n] - step_s) / busy / 1e9)
    return (step_s, *rates)


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


def local_calibration(*, refresh: bool = False) -> Calibration:
    """This machine's calibration: from the cache, or measured now (a few seconds) and cached.

    Args:
        refresh: measure again even when a calibration of this machine is cached.
    """
    from datetime import datetime, timezone

    from qhybrid.estimate.hardware import cpu_model, local_peak_gflops
    from qhybrid.jobs.instances import local_cores

    key = machine_key()
    found = None if refresh else cached_calibration()
    if found is not None:
        return found
    began = time.perf_counter()
    cores = local_cores()
    bandwidth = measure_bandwidth()
    call, serial, parallel_small, parallel, parallel_large = isolated("calibrate.measure_qaoa")
    step_s, qml_small, qml_mid, qml_rate, qml_large = isolated("calibrate.measure_qml")
    peak = local_peak_gflops(cores)
    cal = Calibration(
        key=key, cpu_model=cpu_model(), cores=cores, peak_gflops=peak, core_ghz=peak / cores / 16,
        bandwidth_gbs=bandwidth, qaoa_call_s=call, qaoa_serial_gflops=serial,
        qaoa_parallel_small_gflops=parallel_small, qaoa_parallel_gflops=parallel,
        qaoa_parallel_large_gflops=parallel_large,
        qml_step_s=step_s, qml_small_gflops=qml_small, qml_mid_gflops=qml_mid, qml_gflops=qml_rate, qml_large_gflops=qml_large,
        measured=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        seconds=time.perf_counter() - began,
    )
    store(key, asdict(cal))
    return cal
