"""The estimate beside a job: the budget check at submission, the stored prediction, predicted vs measured.

``Job.create`` calls :func:`preflight` before anything is written: with a
``max_cost`` it predicts the run (calibrating this machine once if needed) and
refuses a job whose predicted cost exceeds the budget unless ``force``; without
one it predicts with the cached calibration, or, when there is none, with this
CPU's nominal figures (``calibrate.nominal_calibration``: nothing measured, a
submission never waits for a calibration it did not ask for; PennyLane devices
get a nominal probe when none is cached). An uncalibrated prediction is marked
so (``calibrated: false``); the cost line's other instances still come from the
model's time ratios, anchored to the measured run (its own calibration point). The prediction is written to
``estimate.json`` in the job folder; ``describe()`` puts it beside the
measurement and prices the same run on other instance types by the model's
time ratios, anchored to the measured bill.
"""
from __future__ import annotations

import json
from pathlib import Path

from qhybrid.errors import SpecError

FILE = "estimate.json"


class BudgetError(SpecError):
    """A job whose predicted cost exceeds its max_cost (submit with force=True to run it anyway)."""


def kwargs_from_spec(spec) -> dict:
    """``Job.create`` keywords that describe a built :class:`~qhybrid.jobs.spec.JobSpec`."""
    from qhybrid.jobs import InstanceConfig

    return {"device": spec.device, "source_module": spec.source, "entry_point": spec.entry_point,
            "hyperparameters": spec.hyperparameters, "distribution": spec.distribution,
            "processes_per_instance": spec.processes_per_instance if spec.distribution else None,
            "instance_config": InstanceConfig(instanceType=spec.instance_type, instanceCount=spec.instance_count)}


def preflight(spec, *, force: bool = False):
    """Predict ``spec`` (None when the estimate fails); check its budget. Without a budget nothing is
    measured: the cached calibration, or the nominal one (:func:`~qhybrid.estimate.calibrate.nominal_calibration`).

    Raises:
        BudgetError: the predicted cost on the job's instances exceeds ``spec.max_cost`` and not ``force``.
    """
    from qhybrid.estimate.calibrate import cached_calibration, nominal_calibration
    from qhybrid.estimate.predict import estimate_job
    from qhybrid.estimate.render import format_cost, summary

    from qhybrid.errors import QhybridError

    cal = None if spec.max_cost is not None else (cached_calibration() or nominal_calibration())
    try:
        est = estimate_job(kwargs_from_spec(spec), calibration=cal)
    except (QhybridError, OSError):  # a failed probe, an unreadable store: no prediction, the job runs as before
        return None
    row = est.row(spec.instance_type)
    if spec.max_cost is not None and not force and row.cost_usd is not None and row.cost_usd > spec.max_cost:
        raise BudgetError(f"predicted cost {format_cost(row)} exceeds max_cost ${spec.max_cost:g} "
                          f"({summary(est)}); raise max_cost, choose a cheaper instance "
                          f"(qhybrid estimate), or submit with force=True (--force)")
    return est


def write_prediction(folder: Path, est) -> None:
    """Write the estimate to ``folder/estimate.json`` (atomically)."""
    from qhybrid.jobs.contract import write_atomic

    write_atomic(Path(folder) / FILE, json.dumps(est.to_dict()))


def read_prediction(folder: Path) -> dict | None:
    """The stored estimate as a dict, or None."""
    try:
        return json.loads((Path(folder) / FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def measured_per_iteration(folder: Path, prediction: dict | None) -> float | None:
    """Median measured seconds per iteration from the job's metrics: ``iteration_seconds`` (QAOA), or
    ``epoch_seconds`` over the steps of an epoch (QML, from the prediction's iteration count)."""
    import statistics

    from qhybrid.jobs import metrics

    rows = metrics.read_rows(Path(folder) / "metrics.jsonl")
    its = [float(r["iteration_seconds"]) for r in rows if r.get("iteration_seconds") is not None and not r.get("rank")]
    if its:
        return statistics.median(its)
    epochs = [float(r["epoch_seconds"]) for r in rows if r.get("epoch_seconds") is not None and not r.get("rank")]
    total = (prediction or {}).get("iterations")
    if epochs and total:
        return statistics.median(epochs) / max(1, total // max(1, len(epochs)))
    return None


def compare(prediction: dict | None, *, instance_type: str, measured_seconds: float | None,
            billed_seconds: float | None, instance_count: int, folder: Path | None = None) -> dict:
    """Predicted vs measured for ``describe()``, and the model's costs of the same run elsewhere.

    Returns:
        ``predicted`` (the own row's seconds per iteration, total seconds, cost, method), ``measured_over_predicted``
        (measured run time / predicted total), ``measured_seconds_per_iteration`` (from the job's metrics),
        ``cost_on_other_instances_usd`` (by the model's time ratio, anchored to the measured bill; without
        a predicted time, :func:`by_core_speed`) and ``cost_on_other_instances_basis`` (``model`` or ``this run``).
    """
    from qhybrid.jobs import instances

    out = {"predicted": None, "measured_over_predicted": None, "cost_on_other_instances_basis": None,
           "measured_seconds_per_iteration": None}
    rows = {r["target"]: r for r in (prediction or {}).get("rows", [])}
    own = rows.get(instance_type)
    if own is not None:
        out["predicted"] = {k: own[k] for k in ("seconds_per_iteration", "total_seconds", "cost_usd", "method",
                                                "fits", "needed_bytes")}
        # a run to convergence: its length was an expectation (with the 80 % range), not a known count
        out["predicted"]["iterations_expected"] = bool(prediction.get("iterations_expected"))
        out["predicted"]["total_seconds_range"] = own.get("total_seconds_range")
        out["predicted"]["calibrated"] = prediction.get("calibrated", True)
        if own["total_seconds"] and measured_seconds:
            out["measured_over_predicted"] = measured_seconds / own["total_seconds"]
        if folder is not None:
            out["measured_seconds_per_iteration"] = measured_per_iteration(folder, prediction)
    if not billed_seconds:
        out["cost_on_other_instances_usd"] = {}
        return out
    if own is not None and own["total_seconds"]:
        cat = instances.catalogue()
        others = {}
        for name, row in sorted(rows.items()):
            if name in ("local", instance_type) or not row["total_seconds"] or row["fits"] is False:
                continue
            seconds = instances.ceil_seconds(billed_seconds * row["total_seconds"] / own["total_seconds"])
            cost = instances.cost(seconds, cat[name], instance_count)
            if cost is not None:
                others[name] = cost
        out["cost_on_other_instances_usd"] = others
        out["cost_on_other_instances_basis"] = "model"
        return out
    out["cost_on_other_instances_usd"] = by_core_speed(billed_seconds, instance_type, instance_count)
    out["cost_on_other_instances_basis"] = "this run"
    return out


def by_core_speed(billed_seconds: float, instance_type: str, instance_count: int) -> dict[str, float]:
    """The same run's cost on each priced CPU-or-GPU type when no prediction has a time for it (a script
    without history, a job from before predictions were stored): this run as its own history, scaled by
    one core's peak there against its own type's (what ``estimate run`` does with a script's history)."""
    from qhybrid.estimate.hardware import instance_machine
    from qhybrid.jobs import instances

    cat = instances.catalogue()
    own = instance_machine(cat[instance_type]).core_gflops if instance_type in cat else None
    out = {}
    for name, inst in sorted(cat.items()):
        if name == instance_type or inst.usd_per_minute is None or own is None:
            continue
        seconds = instances.ceil_seconds(billed_seconds * own / instance_machine(inst).core_gflops)
        out[name] = instances.cost(seconds, inst, instance_count)
    return out
