"""This machine's QML figures: the QML job's own training step and evaluation, timed as the job runs them.

:func:`measure_qml` (run by :func:`qhybrid.estimate.calibrate.local_calibration` in a fresh
interpreter) sets the job's threads (``workloads.qml.set_threads``: torch on one thread for
``qhybrid.cpu``), times ``workloads.qml.train_step`` on a DataLoader's batches of 16 at each of
QML_SIZES and ``workloads.qml.evaluate`` of QML_EVAL samples at the smallest, and the page faults
of a fresh temporary; :func:`qml_figures` solves them for the fixed step, the rates per busy
thread and the evaluation's fixed part, which :func:`qhybrid.estimate.model.qml_cpu_seconds` and
:func:`~qhybrid.estimate.model.qml_eval_cpu_seconds` give back.
"""
from __future__ import annotations

from qhybrid.estimate.calibrate import _best
from qhybrid.estimate.hardware import local_l3_bytes
from qhybrid.estimate.model import qml_fixed_seconds
from qhybrid.estimate.work import qml_eval_work, qml_huge_wires, qml_split, qml_work
from qhybrid.jobs.instances import local_cores

QML_SIZES = (4, 8, 10, 12, 16)  # overhead; rates where threads (10), L2 and L3 change
QML_BATCH = 16
QML_EVAL = 52  # the job's held-out samples by default (a quarter of Sonar's 208)
QML_HUGE_BATCH = 4  # the step past the cache (work.qml_huge_wires): one sample a thread, at most this many


def qml_step(model, batch: int):
    """``step()``: one training step of the QML job (``workloads.qml.train_step``: Adam, the margin loss,
    the loss and accuracy bookkeeping) on the next batch of a DataLoader over Sonar-shaped random
    inputs, drawn as the job draws its batches.

    The caller sets the job's threads (``workloads.qml.set_threads``): torch on one thread for
    ``qhybrid.cpu``; with torch's own threads (v5) a step's main thread handed torch's small ops to
    an OpenMP worker, which the job never does, and its time swung between runs.
    """
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    from qhybrid.workloads.qml import train_step

    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(4 * batch, 60, dtype=torch.float64, generator=gen)
    y = (torch.arange(4 * batch) % 2 * 2 - 1).to(torch.float64)
    loader = DataLoader(TensorDataset(x, y), batch_size=batch, shuffle=True, generator=gen)
    batches = iter(())

    def step():
        nonlocal batches
        try:
            xb, yb = next(batches)
        except StopIteration:
            batches = iter(loader)
            xb, yb = next(batches)
        train_step(model, opt, xb, yb)

    return step


def qml_eval(model, samples: int):
    """``run()``: the QML job's evaluation after an epoch (``workloads.qml.evaluate``) on ``samples``
    Sonar-shaped random inputs in one batch."""
    import torch

    from qhybrid.workloads.qml import evaluate

    x = torch.rand(samples, 60, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    y = (torch.arange(samples) % 2 * 2 - 1).to(torch.float64)

    def run():
        evaluate(model, x, y, torch.device("cpu"))
        model.train()

    return run


def qml_threads(n_wires: int, batch: int, cores: int) -> int:
    """Threads the DressedQNN kernels keep busy with ``cores``: :func:`qhybrid.estimate.work.qml_split`."""
    return qml_split(n_wires, batch, cores)[0]


def qml_figures(times: dict, *, cores: int, wake_s: float, submit_s: float, cache_gbs: float, dram_gbs: float,
                l3_bytes: int, eval_s: float = 0.0, fresh_s_per_gb: float = 0.0) -> tuple[float, ...]:
    """``(per-step s, GFLOP/s per busy thread at 8, 10, 12, 16 wires, per-evaluation s)`` from a DressedQNN
    step's seconds at each of QML_SIZES (batch 16) on ``cores`` threads, and an evaluation's
    (``eval_s``: QML_EVAL samples at QML_SIZES[0] wires).

    The overhead (autograd, Adam, the classical layers: about the same at any size) is the step
    at 4 wires; each rate is the rest of a step's time, less the hand-offs and serial copies
    (:func:`qhybrid.estimate.model.qml_fixed_seconds`), over its arithmetic, divided by the threads
    the kernels kept busy (``work.qml_split``), so the model can give an instance's cores and
    another batch the threads they would get. An evaluation's fixed part is its time at 4 wires
    less its arithmetic there (at the 8-wire rate, which the model holds below 8), hand-offs and copies.
    """
    parts = dict(wake_s=wake_s, submit_s=submit_s, cache_gbs=cache_gbs, dram_gbs=dram_gbs, l3_bytes=l3_bytes,
                 fresh_s_per_gb=fresh_s_per_gb)

    def fixed(work, n, batch, forward=False):
        return qml_fixed_seconds(work, n_wires=n, batch=batch, threads=cores, forward=forward, **parts)

    def rest(n):  # the step less its parts that do not shrink with threads
        return times[n] - fixed(qml_work(n, QML_BATCH), n, QML_BATCH)

    tiny, first = qml_work(QML_SIZES[0], QML_BATCH), qml_work(QML_SIZES[1], QML_BATCH)
    rate = first.flops / max(1e-9, rest(QML_SIZES[1]) - rest(QML_SIZES[0]))  # the smallest state's own rate
    step_s = max(0.0, rest(QML_SIZES[0]) - tiny.flops / rate)
    rates = [rate_per_thread(times[n], n, QML_BATCH, step_s=step_s, cores=cores, **parts) for n in QML_SIZES[1:]]
    ev = qml_eval_work(QML_SIZES[0], QML_EVAL)
    eval_fixed = max(0.0, eval_s - fixed(ev, QML_SIZES[0], QML_EVAL, True) - ev.flops / (rates[0] * 1e9))
    return (step_s, *rates, eval_fixed)


def measure_fresh(mib: int = 64) -> float:
    """Seconds per GB of a temporary mapped anew at every call: the conjugated copy ``bmm`` makes of
    ``<Z0>``'s head (``qml.adjoint``) over a ``mib``-MiB batch of states, past work.FRESH_MIN."""
    import torch

    state = torch.ones(mib * 2**20 // 16, dtype=torch.complex128)
    head = state.view(mib, 2, -1)
    return _best(lambda: torch.bmm(head.conj(), head.transpose(1, 2)), repeats=3) / (state.nbytes / 1e9)


def measure_touch(mib: int = 1024, pieces: int = 4) -> float:
    """Seconds per GB of the first touch of the QML layer's state buffers (``qml.adjoint.new_buffer``,
    huge pages asked for): ``mib`` MiB in ``pieces`` buffers, all kept until the end, one write a
    4 KiB page, the slowest piece's rate. Memory freed a moment ago comes back cheap (here 0.12 s/GB
    against 2-2.7 s/GB on this VM, whose host takes freed memory back after a few seconds), and a job's
    gigabytes of buffers are mostly not that: the slowest piece is the one past it. At most an
    eighth of the free memory."""
    import time

    import torch

    from qhybrid.qml.adjoint import new_buffer
    from qhybrid.sim.memory import available_bytes

    free = available_bytes("cpu")
    if free is not None:  # a small machine: an eighth of its free memory at most
        mib = max(pieces, min(mib, free // 8 // 2**20))
    like = torch.empty(0, dtype=torch.float64)
    kept, worst = [], 0.0
    for _ in range(pieces):
        kept.append(new_buffer(mib * 2**20 // pieces // 8, like))
        began = time.perf_counter()
        kept[-1].numpy()[::512] = 1.0
        worst = max(worst, (time.perf_counter() - began) / (kept[-1].nbytes / 1e9))
    return worst


def rate_per_thread(seconds: float, n_wires: int, batch: int, *, step_s: float, cores: int, **parts) -> float:
    """GFLOP/s per busy thread of a DressedQNN step of ``batch`` samples at ``n_wires`` on ``cores`` threads
    that took ``seconds``: its arithmetic over the step less the fixed step ``step_s`` and the parts that
    do not shrink with threads (:func:`~qhybrid.estimate.model.qml_fixed_seconds` of ``parts``), divided
    by the threads the kernels kept busy."""
    w = qml_work(n_wires, batch)
    fixed = qml_fixed_seconds(w, n_wires=n_wires, batch=batch, threads=cores, **parts)
    return w.flops / max(1e-9, seconds - fixed - step_s) / qml_threads(n_wires, batch, cores) / 1e9


def measure_qml(wake_s: float = 0.0, submit_s: float = 0.0, cache_gbs: float = 1e9,
                dram_gbs: float = 1e9) -> tuple[float, ...]:
    """:func:`qml_figures` of the QML job's training step (batch 16) timed at each of QML_SIZES here, and of
    its evaluation (QML_EVAL samples) at the smallest, on the job's threads (``workloads.qml.set_threads``);
    then :func:`measure_fresh`, and the rate per busy thread past the last-level cache (:func:`rate_per_thread` of a
    step at :func:`~qhybrid.estimate.work.qml_huge_wires`, one sample a thread: a few seconds)."""
    import torch

    from qhybrid.qml import DressedQNN
    from qhybrid.workloads.qml import set_threads

    set_threads("local:qhybrid/qhybrid.cpu")
    touch = measure_touch()  # first: before this process frees anything
    times = {n: float("inf") for n in QML_SIZES}
    eval_s = float("inf")
    for n in QML_SIZES * 2:  # two rounds, the best of each size: one noisy moment does not stick
        model = DressedQNN(n, generator=torch.Generator().manual_seed(0))
        times[n] = min(times[n], _best(qml_step(model, QML_BATCH), repeats=5))
        if n == QML_SIZES[0]:
            eval_s = min(eval_s, _best(qml_eval(model, QML_EVAL), repeats=5))
    fresh = measure_fresh()
    cores = local_cores()
    parts = dict(wake_s=wake_s, submit_s=submit_s, cache_gbs=cache_gbs, dram_gbs=dram_gbs, l3_bytes=local_l3_bytes(),
                 fresh_s_per_gb=fresh)
    figures = qml_figures(times, cores=cores, eval_s=eval_s, **parts)
    batch = max(1, min(cores, QML_HUGE_BATCH))
    n = qml_huge_wires(parts["l3_bytes"], batch)
    step = qml_step(DressedQNN(n, generator=torch.Generator().manual_seed(0)), batch)
    step()  # the state buffers: mapped and faulted in once, as a job's first step does
    huge = rate_per_thread(_best(step, repeats=2), n, batch, step_s=figures[0], cores=cores, **parts)
    return (*figures, fresh, huge, touch)
