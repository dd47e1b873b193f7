"""The workloads' parts of an estimate row: seconds per iteration, memory and fixed seconds of the
QAOA and QML workloads on one machine, with qhybrid's engine (CPU, or a GPU's kernel set) or a
PennyLane simulator (probed here, or modelled for ``lightning.gpu``). :mod:`.predict` builds the rows.
"""
from __future__ import annotations

import math

from qhybrid.estimate import gpu as gpu_model
from qhybrid.estimate import model, probe, work
from qhybrid.estimate.counting import qml_epoch
from qhybrid.estimate.jobtime import PENNYLANE_START_S, fixed_seconds
from qhybrid.estimate.model import _core_ratio
from qhybrid.estimate.work import ITEM


def qaoa_parts(job, machine, cal, gpu: bool, notes: list, *, kernels: str = "",
          own: bool = False) -> tuple[str, float | None, int, float]:
    """``(method, seconds per start's iteration, bytes needed, fixed seconds)`` of the QAOA workload on
    ``machine`` (``kernels``: the GPU kernel set, ``"triton"`` or ``"torch"``; empty on a CPU)."""
    s = job.settings
    dtype = getattr(s, "dtype", "complex128")
    if kernels:
        w = gpu_model.qaoa_work(s.n_nodes, s.n_layers, dtype=dtype, problem=s.problem, kernels=kernels)
    else:
        w = work.qaoa_work(s.n_nodes, s.n_layers, dtype=dtype, problem=s.problem, gpu=gpu)
    if job.target.provider != "qhybrid":  # lightning.gpu is modelled, lightning.qubit & co probed
        need = 3 * 2**s.n_nodes * work.ITEM[dtype] + work.RUNTIME_BYTES
        return "model" if gpu else "probe", pennylane_seconds(job, machine, cal, gpu, notes), need, PENNYLANE_START_S
    m = s.n_nodes - 1 if s.problem == "maxcut" else s.n_nodes
    seconds = model.gpu_seconds(w, machine) if gpu else model.qaoa_cpu_seconds(w, machine, cal, simulated_qubits=m)
    factor = getattr(cal, "qaoa_job_factor", 1.0)
    if machine.name == "local" and not gpu and factor > 1.0:  # this machine's own: its threads and cores as jobs find them
        seconds *= factor
        notes.append(f"iterations as a short job here ran them: {factor:.2f}x the isolated timing "
                     "(the threads did not always have a core each)")
    fixed = _fixed("qaoa", machine, cal, notes, settings=s, work=w, own=own, gpu=gpu)
    if gpu:
        notes.append("GPU model not calibrated on a GPU yet")
    return "model", seconds, w.memory_bytes, fixed


def qml_parts(job, machine, cal, gpu: bool, notes: list, *, count: int, world: int,
         kernels: str = "", own: bool = False) -> tuple[str, float | None, int, float]:
    """``(method, seconds per step, bytes needed, fixed seconds)`` of the QML workload on ``machine``,
    over ``world`` ranks on ``count`` instances (the all-reduce added)."""
    s = job.settings
    held, steps = qml_epoch(s)
    local_batch = max(1, math.ceil((s.ndata - held) / steps / world))  # a step's samples on one rank
    params = work.qml_params(s.nwires)
    method, fixed = "model", PENNYLANE_START_S
    if job.target.provider == "qhybrid":
        from qhybrid.estimate.qmlstep import qml_step

        step = qml_step(s, machine, cal, local_batch=local_batch, held=-(-held // world), steps=steps,
                        per_machine=max(1, world // count), gpu=gpu, kernels=kernels or None)
        seconds, need = step.seconds, step.need
        fixed = _fixed("qml", machine, cal, notes, settings=s, buffer_bytes=step.need - work.RUNTIME_BYTES,
                       own=own, gpu=gpu)
        notes.append(f"the engine simulates {step.chunk} sample(s) at a time in training, "
                     f"{step.eval_chunk} in evaluation")
        if step.note:
            notes.append(step.note)
        if gpu:
            notes.append("GPU model not calibrated on a GPU yet")
    else:
        method = "model" if gpu else "probe"
        # a TorchLayer runs sample by sample
        need = 3 * 2**s.nwires * work.ITEM[getattr(s, "dtype", "complex128")] + work.RUNTIME_BYTES
        seconds = pennylane_seconds(job, machine, cal, gpu, notes, batch=local_batch)
    if seconds is not None and world > 1:
        seconds += model.allreduce_seconds(params, world=world, instance_count=count, machine=machine, gpu=gpu)
        notes.append(f"data parallel over {world} ranks (all-reduce of {params} parameters)")
    return method, seconds, need, fixed


def _fixed(workload: str, machine, cal, notes: list, *, own: bool, gpu: bool, **parts) -> float:
    """The job's seconds beyond its iterations (:func:`~qhybrid.estimate.jobtime.fixed_seconds`), noting a
    compilation on an empty kernel cache; on a GPU the start-up alone (its kernels, diagonal and buffers
    live on the device: not modelled here)."""
    f = fixed_seconds(workload, machine, cal, own_cache=own and not gpu, **parts)
    if gpu:
        return f.start
    if f.compile:
        notes.append(f"the kernel cache has no {workload} kernels yet: the first job compiles them "
                     f"(about {f.compile:.0f} s, counted)")
    return f.seconds


def pennylane_seconds(job, machine, cal, gpu: bool, notes: list, batch: int = 1) -> float | None:
    s = job.settings
    n = s.n_nodes if job.workload == "qaoa" else s.nwires
    edges = getattr(s, "n_edges", 0)
    layers = getattr(s, "n_layers", 2)
    item = ITEM[getattr(s, "dtype", "complex128")]
    if gpu:
        notes.append("lightning.gpu modelled (its adjoint's state passes at the GPU's bandwidth), not probed: "
                     "no GPU measured, uncalibrated")
        return probe.lightning_gpu_seconds(job.workload, n=n, edges=edges, layers=layers, batch=batch,
                                           machine=machine, item=item)
    pr = probe.probe(job.target, job.workload, n=n, edges=edges, layers=layers, batch=batch, measure=not cal.nominal)
    notes.append(f"probe: {pr.device} timed here at {', '.join(map(str, pr.sizes))} qubits, scaled by 2^n x gates"
                 if pr.sizes else f"probe NOT run: {pr.device} taken as lightning.qubit's nominal probe")
    return probe.probe_seconds(pr, n=n, edges=edges, layers=layers, state_bytes=2**n * item,
                               l3_bytes=machine.l3_bytes, core_ratio=_core_ratio(machine, cal))
