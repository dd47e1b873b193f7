"""Jobs as MLflow runs (``qhybrid jobs export --mlflow URI``), so they sit beside other experiments.

Each job becomes one run named after it, in an experiment (``qhybrid`` by default):

- params: the hyperparameters, device, instance type and count, world size, entry point;
- metrics: every metric the job logged (rank 0), its ``iteration_number`` as the step and its
  timestamp as the time; then ``result.*`` (the numbers of its result), ``cost_usd``,
  ``billed_seconds``, ``measured_seconds`` and ``estimate.*`` (the stored prediction);
- tags: ``qhybrid.job``, ``qhybrid.state``, ``qhybrid.backend``, the device and instance, the
  failure reason, and the job's own tags;
- artifacts: ``logs/job.log``, ``results/``, ``checkpoints/``, ``spec.json``, ``environment.json``.

Exporting a job again replaces its earlier run. ``follow`` logs a running job's metrics as they
come and closes the run when the job ends. Needs ``mlflow-skinny`` (``pip install qhybrid[mlflow]``).
"""
from __future__ import annotations

import math
import time
from datetime import datetime
from pathlib import Path

STATUS = {"COMPLETED": "FINISHED", "FAILED": "FAILED", "CANCELLED": "KILLED"}
BATCH = 900  # MLflow takes at most 1000 metrics per batch
HIDDEN = ("timestamp", "iteration_number", "rank")


def _client(uri: str):
    from qhybrid.errors import QhybridError

    try:
        from mlflow.tracking import MlflowClient
    except ImportError:
        raise QhybridError("exporting to MLflow needs mlflow-skinny: pip install 'qhybrid[mlflow]'") from None
    return MlflowClient(tracking_uri=uri)


def _experiment(client, name: str) -> str:
    found = client.get_experiment_by_name(name)
    return found.experiment_id if found is not None else client.create_experiment(name)


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def metric_points(rows: list[dict], *, start: int = 0) -> list[tuple[str, float, int, int]]:
    """(key, value, timestamp ms, step) of rank 0's metric rows from ``rows[start:]``; the step is
    the row's ``iteration_number`` (else its position)."""
    points = []
    for i, row in enumerate(rows[start:], start=start):
        if row.get("rank"):
            continue
        step = row.get("iteration_number")
        step = int(step) if _finite(step) else i
        stamp = int(1000 * row["timestamp"]) if _finite(row.get("timestamp")) else int(1000 * time.time())
        points += [(k, float(v), stamp, step) for k, v in row.items() if k not in HIDDEN and _finite(v)]
    return points


def summary_metrics(detail: dict) -> dict:
    """The result's numbers, the bill and the estimate, as final metrics."""
    out = {f"result.{k}": float(v) for k, v in (detail["result_data"] or {}).items() if _finite(v)}
    for key, value in (("cost_usd", detail["cost_usd"]), ("billed_seconds", detail["cost_view"]["billed_seconds"]),
                       ("measured_seconds", detail["measured_seconds"]),
                       ("measured_seconds_per_iteration", detail["measured_seconds_per_iteration"])):
        if _finite(value):
            out[key] = float(value)
    for key, value in (detail["predicted"] or {}).items():
        if _finite(value):
            out[f"estimate.{key}"] = float(value)
    if _finite(detail["cost_view"]["estimate_usd"]):
        out["estimate.cost_usd"] = float(detail["cost_view"]["estimate_usd"])
    return out


def _params_and_tags(job, detail: dict) -> tuple[dict, dict]:
    spec = job.spec() if not detail["damaged"] else None
    params = {f"hp.{k}": str(v)[:6000] for k, v in detail["hyperparameters"].items()}
    params.update({"device": detail["device_arn"], "instance_type": detail["instance"],
                   "instance_count": str(detail["instance_count"]), "world_size": str(detail["world_size"]),
                   "entry_point": str(detail["entry_point"])})
    tags = {"qhybrid.job": job.name, "qhybrid.state": detail["state"],
            "qhybrid.backend": spec.backend if spec else "?", "qhybrid.device": detail["device"],
            "qhybrid.instance": detail["instance"], "qhybrid.folder": detail["folder"]}
    if detail["failure_reason"]:
        tags["qhybrid.failure_reason"] = detail["failure_reason"][:5000]
    tags.update({f"job.{k}": str(v) for k, v in detail["tags"].items()})
    return params, tags


def _log_metrics(client, run_id: str, points: list[tuple]) -> None:
    from mlflow.entities import Metric

    for i in range(0, len(points), BATCH):
        client.log_batch(run_id, metrics=[Metric(k, v, t, s) for k, v, t, s in points[i:i + BATCH]])


def _artifacts(client, run_id: str, folder: Path) -> None:
    from qhybrid.jobs import contract

    for sub in (contract.RESULTS_DIR, contract.CHECKPOINT_DIR):
        if (folder / sub).is_dir() and any((folder / sub).iterdir()):
            client.log_artifacts(run_id, str(folder / sub), sub)
    for name, where in ((f"{contract.LOGS_DIR}/{contract.JOB_LOG}", contract.LOGS_DIR),
                        (contract.SPEC_FILE, None), ("environment.json", None)):
        if (folder / name).is_file():
            client.log_artifact(run_id, str(folder / name), where)


def _earlier_runs(client, experiment_id: str, name: str) -> list:
    return client.search_runs([experiment_id], filter_string=f"tags.`qhybrid.job` = '{name}'")


def export_job(job, *, client, experiment_id: str, follow: bool = False, poll: float = 2.0) -> str:
    """Write ``job`` as one MLflow run (replacing an earlier export of it); return the run's id.

    Args:
        job: a ``Job``.
        client: an ``MlflowClient``.
        experiment_id: the experiment to write to.
        follow: when the job is still running, log its metrics as they come until it ends.
        poll: seconds between looks while following.
    """
    from qhybrid import views
    from qhybrid.jobs import contract, metrics

    for old in _earlier_runs(client, experiment_id, job.name):
        client.delete_run(old.info.run_id)
    detail = views.job_detail(job)
    params, tags = _params_and_tags(job, detail)
    started = detail["started"] or detail["created"]
    start_ms = int(1000 * datetime.fromisoformat(started).timestamp()) if started else None
    run = client.create_run(experiment_id, start_time=start_ms, tags=tags, run_name=job.name)
    run_id = run.info.run_id
    from mlflow.entities import Param

    items = list(params.items())
    for i in range(0, len(items), 90):
        client.log_batch(run_id, params=[Param(k, v) for k, v in items[i:i + 90]])
    logged = 0
    path = job.folder / contract.METRICS_FILE
    while True:
        rows = metrics.read_rows(path)
        _log_metrics(client, run_id, metric_points(rows, start=logged))
        logged = len(rows)
        if not follow or job.state() in ("COMPLETED", "FAILED", "CANCELLED"):
            break
        time.sleep(poll)
    if follow:
        rows = metrics.read_rows(path)
        _log_metrics(client, run_id, metric_points(rows, start=logged))
        detail = views.job_detail(job)
        client.set_tag(run_id, "qhybrid.state", detail["state"])
    now = int(1000 * time.time())
    _log_metrics(client, run_id, [(k, v, now, 0) for k, v in summary_metrics(detail).items()])
    _artifacts(client, run_id, job.folder)
    status = STATUS.get(detail["state"])
    if status:
        ended = detail["ended"]
        client.set_terminated(run_id, status=status,
                              end_time=int(1000 * datetime.fromisoformat(ended).timestamp()) if ended else now)
    return run_id


def export(names: list[str], *, uri: str, experiment: str = "qhybrid", follow: bool = False,
           poll: float = 2.0) -> dict:
    """Export jobs ``names`` (every job when empty) to the MLflow tracking store at ``uri``.

    Args:
        names: job names.
        uri: an MLflow tracking URI (``sqlite:///...``, ``http://...``, ``file:...``).
        experiment: the experiment's name (created when missing).
        follow: log running jobs' metrics as they come, until they end (one job after the other).
        poll: seconds between looks while following.

    Returns:
        ``{job name: run id}``.

    Raises:
        QhybridError: mlflow is not installed, or the store refuses (one line, from MLflow).
    """
    from qhybrid.errors import QhybridError
    from qhybrid.submit import Job

    jobs = [Job.get(n) for n in names] if names else Job.list()
    try:
        client = _client(uri)
        experiment_id = _experiment(client, experiment)
        return {job.name: export_job(job, client=client, experiment_id=experiment_id, follow=follow, poll=poll)
                for job in jobs}
    except Exception as err:
        if type(err).__name__ != "MlflowException":
            raise
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise QhybridError(f"MLflow at {uri!r} refused the export: {first}") from None
