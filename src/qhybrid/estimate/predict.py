"""Predictions for a job before it runs: one row for this machine and one per instance type.

``estimate_spec(spec, target=..., workload=..., settings=...)`` takes a built JobSpec, its
resolved Target and the workload's parsed settings (``workloads.table.settings_of``), as
submission and ``qhybrid estimate`` have them, and returns an :class:`Estimate`: per target, whether the
run fits in memory (bytes needed vs RAM or GPU memory), seconds per iteration,
total time and total cost for ``instanceCount`` instances, and how the time is
known (``model``, ``probe``, ``history`` or ``unknown``). Nothing is run but the
one-off calibration and PennyLane probes, nothing is written but their cache.
``estimate_job(job_kwargs)`` does the same from ``Job.create``'s keywords (the spec built once).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from qhybrid.devices import Target, resolve
from qhybrid.errors import SpecError
from qhybrid.estimate import gpu as gpu_model
from qhybrid.estimate import work
from qhybrid.estimate.calibrate import local_calibration, local_machine
from qhybrid.estimate.counting import counted_iterations, expected_run, iteration_note, qaoa_ending_units, work_units
from qhybrid.estimate.hardware import instance_machine
from qhybrid.estimate.history import script_history
from qhybrid.estimate.model import _core_ratio
from qhybrid.estimate.workparts import qml_parts, qaoa_parts
from qhybrid.jobs import instances
from qhybrid.jobs.instances import catalogue, get_instance
from qhybrid.jobs.spec import JobSpec, build_spec
from qhybrid.workloads import table

MODELLED_ONLY = ("local:pennylane/lightning.gpu",)


@dataclass(frozen=True)
class Row:
    """One target's prediction (None = unknown)."""

    target: str
    device: str
    count: int
    fits: bool | None
    needed_bytes: int | None
    available_bytes: int | None
    seconds_per_iteration: float | None
    total_seconds: float | None
    cost_usd: float | None
    approximate: bool
    method: str
    price_kind: str = ""
    price_date: str = ""
    price_source: str = ""
    notes: tuple[str, ...] = ()
    total_seconds_range: tuple[float, float] | None = None  # a run to convergence: 80 % of runs
    cost_usd_range: tuple[float, float] | None = None
    kernels: str = ""  # qhybrid.gpu's kernel set on this type: "triton" or "torch" ("" not a GPU row)
    fixed_seconds: float | None = None  # of total_seconds, what is not iterations (.jobtime: start-up, size, compiling)


@dataclass(frozen=True)
class Estimate:
    """A job's predictions, rows sorted by cost (unknown costs last, then by time)."""

    workload: str
    device: str
    instance_type: str
    instance_count: int
    world_size: int
    iterations: int | None
    rows: tuple[Row, ...]
    cheapest: str | None = None
    fastest: str | None = None
    notes: tuple[str, ...] = field(default=())
    iterations_expected: bool = False  # True: a run to convergence, whose length is a measured expectation
    iterations_range: tuple[int, int] | None = None  # 80 % of measured runs, in the units of ``iterations``
    calibrated: bool = True  # False: this machine's nominal figures (calibrate.nominal_calibration), nothing measured

    def row(self, target: str) -> Row:
        """The row of ``target`` (``local`` or an instance type). Raises SpecError if absent."""
        for r in self.rows:
            if r.target == target:
                return r
        raise SpecError(f"no estimate for {target!r}; estimated: {', '.join(r.target for r in self.rows)}")

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class _Job:
    workload: str  # qaoa | qml | script
    target: Target
    settings: object
    distribution: str | None = None
    processes_per_instance: int | None = None
    history: object = None  # a script's History (None: none, or not a script)

    @property
    def device(self) -> str:
        return str(self.target)


def spec_of(job_kwargs: dict) -> tuple[JobSpec, Target]:
    """The JobSpec ``Job.create(**job_kwargs)`` would build (``jobs.spec.build_spec``: every check of a
    submission), and its Target; the device defaults to ``qhybrid.cpu``. A device the estimate models
    without it being installed here (:data:`MODELLED_ONLY`) is resolved on its own, the spec built
    without it.

    Raises:
        SpecError, InstanceError, DeviceError: as ``Job.create`` would.
    """
    if job_kwargs.get("source_module") is None:
        raise SpecError("the job has no source_module to estimate")
    device = job_kwargs.get("device") or "local:qhybrid/qhybrid.cpu"
    if device in MODELLED_ONLY:
        return build_spec(**{**job_kwargs, "device": None}), resolve(device, installed=False)
    spec = build_spec(**{**job_kwargs, "device": device})
    return spec, spec.target()


def _script_or(workload, target: Target, settings, *, source, entry_point, hyperparameters, distribution,
               processes_per_instance) -> _Job:
    """A built-in workload's job, or a script's with its history (what earlier runs of it measured)."""
    if workload is not None:
        return _Job(workload, target, settings, distribution, processes_per_instance)
    hist = script_history(source=source, entry_point=entry_point, device=str(target), hyperparameters=hyperparameters)
    return _Job("script", target, None, distribution, processes_per_instance, hist)


def _device_on(target: Target, machine, *, own: bool = False) -> tuple[str, bool]:
    """The device a row runs, and whether it uses a GPU: on the job's own instance type and here the
    job's device; elsewhere qhybrid.cpu/gpu follow the target's GPUs."""
    if not own and target.provider == "qhybrid":
        return ("local:qhybrid/qhybrid.gpu", True) if machine.gpus else ("local:qhybrid/qhybrid.cpu", False)
    return str(target), target.needs_gpu


def _targets(names, gpu, cpu) -> list:
    if names:
        return [get_instance(n) for n in names]
    insts = sorted(catalogue().values(), key=lambda i: i.type)
    if gpu:
        insts = [i for i in insts if i.gpus]
    if cpu:
        insts = [i for i in insts if not i.gpus]
    return insts


def _world(job: _Job, machine, count: int, gpu: bool) -> int:
    if not job.distribution:
        return 1
    ppi = job.processes_per_instance or (machine.gpus if gpu and machine.gpus else 1)
    return count * max(1, ppi)


def _row(job: _Job, machine, inst, cal, count: int, load: tuple, *, own: bool = False) -> Row:
    """One target's row; ``load`` is ``(units, per_step)``: the run in units of one start's iteration
    (what ``seconds`` below is per), and those units in one of the job's own iterations (what the
    row shows per)."""
    device, gpu = _device_on(job.target, machine, own=own)
    notes = list(machine.assumed)
    world = _world(job, machine, count, gpu)
    per_machine = max(1, world // count)
    if gpu and not machine.gpus:
        return _priced(Row(machine.name, device, count, False, None, None, None, None, None, False, "model",
                           notes=(f"{device} needs a GPU; {machine.name} has none",)), inst)
    kernels = ""
    if gpu and job.target.provider == "qhybrid":
        kernels, why = gpu_model.kernel_path(machine)
        notes.append(f"kernels: {kernels} ({why})")
    if job.workload == "qaoa":
        method, seconds, need, fixed = qaoa_parts(job, machine, cal, gpu, notes, kernels=kernels, own=own)
    elif job.workload == "qml":
        method, seconds, need, fixed = qml_parts(job, machine, cal, gpu, notes, count=count, world=world,
                                            kernels=kernels, own=own)
    else:
        return _priced(_script_row(job, machine, cal, count, device), inst)
    if gpu:
        available = int(0.95 * machine.gpu_memory_bytes)
        need_here = need - work.RUNTIME_BYTES + 600 * 2**20  # the states on the GPU, the CUDA context
    else:
        available = int(0.8 * machine.memory_bytes)
        need_here = need * per_machine
    units, per_step = load
    total = None if seconds is None or units is None else fixed + units * seconds
    if seconds is not None and per_step:
        seconds *= per_step  # a job's iteration: every batched start, averaged over the run
    fits = need_here <= available if available else None
    if fits is False:
        notes.append(f"needs {need_here / 2**30:.2f} GiB, has {available / 2**30:.2f} GiB")
    return _priced(Row(machine.name, device, count, fits, need_here, available, seconds, total, None, False,
                       method, notes=tuple(notes), kernels=kernels,
                       fixed_seconds=fixed if total is not None else None), inst)


def _script_row(job: _Job, machine, cal, count: int, device: str) -> Row:
    hist = job.history
    if hist is None:
        return Row(machine.name, device, count, None, None, None, None, None, None, False, "unknown",
                   notes=("no earlier job of this source and hyperparameters: time unknown",))
    total = hist.seconds / _core_ratio(machine, cal)
    per = total / hist.iterations if hist.iterations else None
    return Row(machine.name, device, count, None, None, None, per, total, None, False, "history",
               notes=(f"history: {len(hist.jobs)} earlier job(s) here, median {hist.seconds:.1f} s",))


def _priced(row: Row, inst) -> Row:
    from dataclasses import replace

    if inst is None:  # this machine: no bill
        return replace(row, cost_usd=0.0 if row.total_seconds is not None else None, price_kind="local")
    billed = None if row.total_seconds is None else instances.ceil_seconds(row.total_seconds)
    cost = None if billed is None else instances.cost(billed, inst, row.count)
    return replace(row, cost_usd=cost, approximate=inst.approximate, price_kind=inst.price_kind,
                   price_date=inst.price_date, price_source=inst.price_source)


def _ranged(row: Row, span: tuple[int, int], units: int, inst) -> Row:
    """``row`` with the total time and cost of the shortest and longest of 80 % of runs to convergence
    (``span``: their work in ``_work``'s units; ``units``: the expected run's)."""
    from dataclasses import replace

    if row.total_seconds is None:
        return row
    fixed = row.fixed_seconds or 0.0
    totals = tuple(fixed + k / units * (row.total_seconds - fixed) for k in span)
    costs = None
    if inst is None:
        costs = (0.0, 0.0)
    elif row.cost_usd is not None:
        costs = tuple(instances.cost(instances.ceil_seconds(t), inst, row.count) for t in totals)
    return replace(row, total_seconds_range=totals, cost_usd_range=costs)


def _order(row: Row):
    runs = row.fits is not False and row.total_seconds is not None
    return (not runs, row.cost_usd is None, row.cost_usd or 0.0, row.total_seconds or math.inf, row.target)


def estimate_job(job_kwargs: dict, *, instances=None, gpu: bool = False, cpu: bool = False,
                 calibration=None, local: bool = True) -> Estimate:
    """Predict a job given as ``Job.create``'s keywords: the spec is built once (:func:`spec_of`), then
    :func:`estimate_spec`.

    Args:
        job_kwargs: ``Job.create`` keywords (device, source_module, entry_point, hyperparameters,
            instance_config, distribution, processes_per_instance, ...).
        instances, gpu, cpu, calibration, local: as :func:`estimate_spec`.

    Raises:
        SpecError, InstanceError, DeviceError: bad keywords (as ``Job.create`` would raise).

    Example:
        >>> est = estimate_job(qaoa_kwargs)             # doctest: +SKIP
        >>> est.row("ml.m5.2xlarge").cost_usd           # doctest: +SKIP
    """
    spec, target = spec_of(job_kwargs)
    workload, settings = table.settings_of(spec)
    return estimate_spec(spec, target=target, workload=workload, settings=settings,
                         processes_per_instance=job_kwargs.get("processes_per_instance"), instances=instances,
                         gpu=gpu, cpu=cpu, calibration=calibration, local=local)


def estimate_spec(spec: JobSpec, *, target: Target | None, workload: str | None, settings,
                  processes_per_instance: int | None = None, instances=None, gpu: bool = False, cpu: bool = False,
                  calibration=None, local: bool = True) -> Estimate:
    """Predict a built JobSpec, before it runs: per target (this machine and instance types), whether
    it fits in memory, seconds per iteration, total time and cost.

    Args:
        spec: a :class:`~qhybrid.jobs.spec.JobSpec` (its instance type and count, distribution, source).
        target: the :class:`~qhybrid.devices.Target` resolved at submission.
        workload: the built-in workload's name (None: a script; ``workloads.table.settings_of``).
        settings: that workload's parsed settings (None for a script).
        processes_per_instance: a data-parallel job's processes on each instance, as asked; None: as
            the runtime starts them there (one per GPU, else one).
        instances: instance type names to estimate (default: all, or the GPU / CPU ones).
        gpu, cpu: only GPU instance types / only CPU ones.
        calibration: a :class:`~qhybrid.estimate.calibrate.Calibration` (default: this machine's, cached).
        local: include the row for this machine.

    Returns:
        An :class:`Estimate`; its row for the job's own instance type is always present.

    Raises:
        SpecError: without a target (a device passed through to the script: nothing to model);
            ``gpu`` and ``cpu`` together.
    """
    if gpu and cpu:
        raise SpecError("--gpu and --cpu exclude each other; give one, or --instances a,b,c")
    if target is None:
        raise SpecError(f"device {spec.device!r} is the script's own business: nothing to estimate")
    job = _script_or(workload, target, settings, source=spec.source, entry_point=spec.entry_point,
                     hyperparameters=spec.hyperparameters, distribution=spec.distribution,
                     processes_per_instance=processes_per_instance if spec.distribution else None)
    return _estimate(job, spec.instance_type, spec.instance_count, instances=instances, gpu=gpu, cpu=cpu,
                     calibration=calibration, local=local)


def _estimate(job: _Job, instance_type: str, instance_count: int, *, instances, gpu: bool, cpu: bool,
              calibration, local: bool) -> Estimate:
    own = get_instance(instance_type)
    # a script without history needs no calibration (nothing to scale): none is measured for it
    cal = calibration or (None if job.workload == "script" and job.history is None else local_calibration())
    expected = expected_run(job)
    iterations = counted_iterations(job, expected)
    units = work_units(job, expected)  # QAOA's include the final evaluation, which is no optimizer step
    ending = qaoa_ending_units(job.settings, expected) if job.workload == "qaoa" else 0
    per_step = None if not iterations or units is None else (units - ending) / iterations
    load = (units, per_step)
    counted = iteration_note(job, expected)
    insts = _targets(instances, gpu, cpu)
    if own.type not in {i.type for i in insts}:
        insts.append(own)
    rows = [_row(job, instance_machine(i), i, cal, instance_count, load, own=i.type == own.type)
            for i in insts]
    if local:
        rows.append(_row(job, local_machine(cal), None, cal, 1, load, own=True))
    span = None
    if expected is not None:
        span = (expected.low, expected.high)
        span_units = (work_units(job, expected, expected.low), work_units(job, expected, expected.high))
        rows = [_ranged(r, span_units, units, inst) for r, inst in zip(rows, [*insts, None])]
    rows.sort(key=_order)
    runnable = [r for r in rows if r.fits is not False and r.total_seconds is not None]
    priced = [r for r in runnable if r.cost_usd is not None and r.target != "local"]
    cheapest = min(priced, key=lambda r: r.cost_usd).target if priced else None
    fastest = min(runnable, key=lambda r: r.total_seconds).target if runnable else None
    machine = instance_machine(own)
    _, uses_gpu = _device_on(job.target, machine, own=True)
    return Estimate(workload=job.workload, device=job.device, instance_type=own.type,
                    instance_count=instance_count, world_size=_world(job, machine, instance_count, uses_gpu),
                    iterations=iterations, rows=tuple(rows), iterations_expected=expected is not None,
                    iterations_range=span, cheapest=cheapest, fastest=fastest,
                    calibrated=cal is None or not cal.nominal,
                    notes=counted + _calibration_note(cal))


def _calibration_note(cal) -> tuple[str, ...]:
    if cal is None:
        return ()
    if cal.nominal:
        return (f"NOT calibrated: nominal figures of this CPU ({cal.cpu_model}, {cal.cores} threads), not measured "
                f"(qhybrid estimate calibrates once, in about a minute)",)
    return (f"calibrated here: {cal.cpu_model}, {cal.cores} threads, {cal.bandwidth_gbs:.0f} GB/s DRAM, "
            f"{cal.cache_bandwidth_gbs:.0f} GB/s a thread in cache, {cal.measured}",)
