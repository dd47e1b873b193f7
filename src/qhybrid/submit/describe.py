"""What ``Job.describe()`` answers: the job's record beside its prediction and its cost elsewhere."""
from __future__ import annotations

import time
from datetime import datetime, timezone

from qhybrid.errors import JobError, QhybridError
from qhybrid.estimate.jobs import compare, read_prediction
from qhybrid.jobs import instances
from qhybrid.jobs.environments import env_dir
from qhybrid.jobs.spec import JobSpec
from qhybrid.jobs.state import ACTIVE, TERMINAL, JobState


def _iso(t: float | None) -> str | None:
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="seconds") if t else None


def describe(job) -> dict:
    """Return name, state, device, instance, times, bill, cost elsewhere and failure details.

    A damaged job (folder or spec.json missing or unreadable) is described from its index row,
    with ``damaged`` saying what is wrong (None for a sound job).
    """
    row = job._row()
    try:
        spec, damaged = job.spec(), None
    except JobError as err:
        spec, damaged = None, str(err)
    billed = row["billed_seconds"]
    if billed is None and row["started"] and row["state"] in ACTIVE:
        billed = instances.ceil_seconds(time.time() - row["started"])
    count = spec.instance_count if spec else (row["instance_count"] or 1)
    inst = spec.frozen_instance() if spec else None
    cost = row["cost"] if row["state"] in TERMINAL else None
    if cost is None and inst is not None and billed is not None:
        cost = instances.cost(billed, inst, count)
    measured = row["ended"] - row["started"] if row["ended"] and row["started"] else None
    versus = {"predicted": None, "measured_over_predicted": None, "measured_seconds_per_iteration": None,
              "cost_on_other_instances_usd": {}, "cost_on_other_instances_basis": None}
    if spec is not None:
        try:
            versus = compare(read_prediction(job.folder), instance_type=spec.instance_type,
                             measured_seconds=measured, billed_seconds=billed, instance_count=count,
                             folder=job.folder)
        except QhybridError:  # a broken price file never hides a job
            pass
    return {
        "name": job.name,
        "state": row["state"],
        "device": spec.device if spec else row["device"],
        "entry_point": spec.entry_point if spec else None,
        "instance_type": spec.instance_type if spec else row["instance_type"],
        "instance_count": count,
        "distribution": spec.distribution if spec else None,
        "world_size": spec.world_size if spec else None,
        "hyperparameters": spec.hyperparameters if spec else {},
        "created": _iso(row["created"]),
        "started": _iso(row["started"]),
        "ended": _iso(row["ended"]),
        "billed_seconds": billed,
        "price_usd_per_minute": inst.usd_per_minute if inst else None,
        "estimated_cost_usd": cost,
        "price_kind": inst.price_kind if inst else None,
        "predicted": versus["predicted"],
        "measured_seconds": measured,
        "measured_over_predicted": versus["measured_over_predicted"],
        "measured_seconds_per_iteration": versus["measured_seconds_per_iteration"],
        "cost_on_other_instances_usd": versus["cost_on_other_instances_usd"],
        "cost_on_other_instances_basis": versus["cost_on_other_instances_basis"],
        "tags": spec.tags if spec else {},
        "environment": _environment_of(spec) if spec else None,
        "failure_reason": row["reason"] if row["state"] != JobState.COMPLETED else None,
        "traceback_tail": row["traceback"],
        "folder": str(job.folder),
        "damaged": damaged,
    }


def _environment_of(spec: JobSpec) -> str | None:
    """The folder of the job's own dependency environment (None: the caller's interpreter)."""
    env = spec.extra.get("environment")
    if not env or spec.in_process or spec.backend != "local":  # those run in the caller's interpreter
        return None
    return str(env_dir(env["key"]))
