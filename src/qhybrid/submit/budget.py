"""The budget check at submission, and the prediction stored beside a job.

``Job.create`` calls :func:`check` before anything is written: with a ``max_cost`` it predicts
the run (calibrating this machine once if needed) and refuses a job whose predicted cost exceeds
the budget unless ``force``; without one it predicts with the cached calibration, or, when there
is none, with this CPU's nominal figures (nothing measured: a submission never waits for a
calibration it did not ask for). The estimate reads the spec, its Target and the workload's
parsed settings (``workloads.table.settings_of``), never keywords rebuilt from the spec.
"""
from __future__ import annotations

import json
from pathlib import Path

from qhybrid.devices import Target
from qhybrid.errors import QhybridError
from qhybrid.estimate.calibrate import cached_calibration, nominal_calibration
from qhybrid.estimate.jobs import FILE, BudgetError
from qhybrid.estimate.predict import Estimate, estimate_spec
from qhybrid.estimate.render import format_cost, summary
from qhybrid.jobs.contract import write_atomic
from qhybrid.jobs.spec import JobSpec
from qhybrid.workloads import table


def predict(spec: JobSpec, target: Target | None, *, calibration=None, instances=None, gpu: bool = False,
            cpu: bool = False, local: bool = True) -> Estimate:
    """Predict ``spec``'s memory, time and cost here and on instance types (``estimate.predict``).

    Raises:
        SpecError: a workload's hyperparameters that do not parse; ``gpu`` and ``cpu`` together.
    """
    workload, settings = table.settings_of(spec)
    return estimate_spec(spec, target=target, workload=workload, settings=settings,
                         processes_per_instance=spec.processes_per_instance, calibration=calibration,
                         instances=instances, gpu=gpu, cpu=cpu, local=local)


def check(spec: JobSpec, target: Target | None, *, force: bool = False) -> Estimate | None:
    """Predict ``spec`` (None when the estimate fails); check its budget. Without a budget nothing is
    measured: the cached calibration, or the nominal one.

    Raises:
        BudgetError: the predicted cost on the job's instances exceeds ``spec.max_cost`` and not ``force``.
    """
    cal = None if spec.max_cost is not None else (cached_calibration() or nominal_calibration())
    try:
        est = predict(spec, target, calibration=cal)
    except (QhybridError, OSError):  # a failed probe, an unreadable store: no prediction, the job runs as before
        return None
    row = est.row(spec.instance_type)
    if spec.max_cost is not None and not force and row.cost_usd is not None and row.cost_usd > spec.max_cost:
        raise BudgetError(f"predicted cost {format_cost(row)} exceeds max_cost ${spec.max_cost:g} "
                          f"({summary(est)}); raise max_cost, choose a cheaper instance "
                          f"(qhybrid estimate), or submit with force=True (--force)")
    return est


def write_prediction(folder: Path, est: Estimate) -> None:
    """Write the estimate to ``folder/estimate.json`` (atomically)."""
    write_atomic(Path(folder) / FILE, json.dumps(est.to_dict()))
