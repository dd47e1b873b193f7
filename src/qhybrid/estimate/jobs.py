"""The estimate beside a job: the stored prediction, predicted vs measured.

The budget check at submission is ``qhybrid.submit.budget`` (above the runtime); it writes its
prediction to ``estimate.json`` in the job folder (an uncalibrated one marked
``calibrated: false``); ``describe()`` puts it beside the
measurement and prices the same run on other instance types by the model's
time ratios, anchored to the measured bill.
"""
from __future__ import annotations

import json
from pathlib import Path

from qhybrid.errors import SpecError
from qhybrid.estimate.hardware import instance_machine
from qhybrid.jobs import instances, metrics

FILE = "estimate.json"


class BudgetError(SpecError):
    """A job whose predicted cost exceeds its max_cost (submit with force=True to run it anyway)."""


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
    cat = instances.catalogue()
    own = instance_machine(cat[instance_type]).core_gflops if instance_type in cat else None
    out = {}
    for name, inst in sorted(cat.items()):
        if name == instance_type or inst.usd_per_minute is None or own is None:
            continue
        seconds = instances.ceil_seconds(billed_seconds * own / instance_machine(inst).core_gflops)
        out[name] = instances.cost(seconds, inst, instance_count)
    return out
