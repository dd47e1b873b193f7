"""This machine, measured once: memory bandwidth and a probe of each engine's kernels.

A few seconds (each timing counts ``min(wall-clock, CPU time / busy threads)``, so a
calibration on a shared machine describes the idle one): an in-place scale over a 128 MiB array (bandwidth), the QAOA
energy+gradient at three small sizes (per-call overhead, one-thread and
all-thread arithmetic rates) and a DressedQNN training step at two sizes
(per-step overhead, arithmetic rate). The result is cached as JSON in
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

VERSION = 3
QAOA_SIZES = (10, 16, 18, 20)  # overhead; one thread (m <= 16 runs serially); all threads in and past the cache
QML_SIZES = (4, 8, 12, 16)  # overhead; rates at three sizes (threads, L2, L3 change between them)
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
    qaoa_parallel_small_gflops: float
    qaoa_parallel_gflops: float
    qml_step_s: float
    qml_small_gflops: float
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


def _best(fn, repeats: int = 3, *, threads: int = 1) -> float:
    """Best seconds of ``fn()`` after a warm-up call, as an idle machine would take them.

    Each call counts as ``min(wall-clock, process CPU time / threads)``: on an idle machine the
    two agree (``threads`` = the threads the call keeps busy); on a shared one the wall-clock
    also counts the waiting for other processes, which an instance of our own would not do.
    """
    fn()  # warm: compile, fault pages in
    best = float("inf")
    for _ in range(repeats):
        c, t = time.process_time(), time.perf_counter()
        fn()
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        best = min(best, wall, cpu / max(1, threads))
    return best


def measure_bandwidth(mib: int = 128) -> float:
    """GB/s of an in-place scale (read + write) over ``mib`` MiB."""
    import numpy as np

    a = np.ones(mib * 2**20 // 8)
    seconds = _best(lambda: np.multiply(a, 1.0000001, out=a))
    return 2 * a.nbytes / seconds / 1e9


def measure_qaoa() -> tuple[float, float, float, float]:
    """Per-call overhead (s), one-thread GFLOP/s and all-thread GFLOP/s at 18 and 20 qubits of the QAOA sweep."""
    import networkx as nx

    from qhybrid.qaoa import QAOA

    params = [[0.3, 0.5], [0.4, 0.2]]
    from qhybrid.jobs.instances import local_cores

    times = {n: float("inf") for n in QAOA_SIZES}
    for n in QAOA_SIZES * 2:  # two rounds, the best of each size
        q = QAOA(nx.gnm_random_graph(n, int(1.5 * n), seed=1967))
        threads = 1 if n - 1 <= QAOA.SERIAL_BITS else local_cores()
        times[n] = min(times[n], _best(lambda q=q: q.energy_and_grad(params), repeats=5, threads=threads))
    lo, mid, small, big = (qaoa_work(n, 2) for n in QAOA_SIZES)
    serial = mid.flops / times[QAOA_SIZES[1]]
    call = max(0.0, (times[QAOA_SIZES[0]] - lo.flops / serial) / lo.calls)
    rates = [w.flops / max(1e-9, times[n] - call * w.calls) for w, n in ((small, QAOA_SIZES[2]), (big, QAOA_SIZES[3]))]
    return call, serial / 1e9, rates[0] / 1e9, rates[1] / 1e9


def measure_qml() -> tuple[float, float, float, float]:
    """Per-step overhead (s) and GFLOP/s at 8, 12 and 16 wires of a DressedQNN training step (batch 16)."""
    import torch

    from qhybrid.jobs.instances import local_cores
    from qhybrid.qml import DressedQNN, margin_loss

    times = {n: float("inf") for n in QML_SIZES}
    for n in QML_SIZES * 2:  # two rounds, the best of each size: one noisy moment does not stick
        torch.manual_seed(0)
        model = DressedQNN(n, generator=torch.Generator().manual_seed(0))
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        x = torch.rand(QML_BATCH, 60, dtype=torch.float64)
        y = (torch.arange(QML_BATCH) % 2 * 2 - 1).to(torch.float64)

        def step(model=model, opt=opt, x=x, y=y):
            opt.zero_grad()
            margin_loss(model(x), y).backward()
            opt.step()

        threads = 1 if n < 10 else local_cores()  # below 10 wires the planar kernels run on one thread
        times[n] = min(times[n], _best(step, repeats=5, threads=threads))
    tiny, small, mid, big = (qml_work(n, QML_BATCH) for n in QML_SIZES)
    rate = (mid.flops - tiny.flops) / max(1e-9, times[QML_SIZES[2]] - times[QML_SIZES[0]])
    step_s = max(0.0, times[QML_SIZES[0]] - tiny.flops / rate)
    rates = [w.flops / max(1e-9, times[n] - step_s) for w, n in ((small, QML_SIZES[1]), (mid, QML_SIZES[2]),
                                                                  (big, QML_SIZES[3]))]
    return (step_s, *(r / 1e9 for r in rates))


def _read_cache(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


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

    key, path = machine_key(), cache_path()
    found = None if refresh else cached_calibration()
    if found is not None:
        return found
    began = time.perf_counter()
    cores = local_cores()
    bandwidth = measure_bandwidth()
    call, serial, parallel_small, parallel = isolated("calibrate.measure_qaoa")
    step_s, qml_small, qml_rate, qml_large = isolated("calibrate.measure_qml")
    peak = local_peak_gflops(cores)
    cal = Calibration(
        key=key, cpu_model=cpu_model(), cores=cores, peak_gflops=peak, core_ghz=peak / cores / 16,
        bandwidth_gbs=bandwidth, qaoa_call_s=call, qaoa_serial_gflops=serial,
        qaoa_parallel_small_gflops=parallel_small, qaoa_parallel_gflops=parallel,
        qml_step_s=step_s, qml_small_gflops=qml_small, qml_gflops=qml_rate, qml_large_gflops=qml_large,
        measured=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        seconds=time.perf_counter() - began,
    )
    cached = _read_cache(path)
    cached[key] = asdict(cal)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(cached, indent=1), encoding="utf-8")
    tmp.replace(path)
    return cal
