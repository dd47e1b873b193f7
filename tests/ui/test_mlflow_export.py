"""``qhybrid jobs export --mlflow``: jobs written as MLflow runs, read back through MLflow's client
from a real local tracking store."""
from __future__ import annotations

import json

import pytest

from qhybrid.submit import Job

pytest.importorskip("mlflow", reason="the mlflow extra (mlflow-skinny) is not installed")

CPU = "local:qhybrid/qhybrid.cpu"


@pytest.fixture
def two_jobs(tmp_path, live_script):
    done = Job.create(CPU, str(live_script), job_name="exported", in_process=True, tags={"team": "qaoa"},
                      hyperparameters={"steps": 5, "pause": 0})
    bad = tmp_path / "bad.py"
    bad.write_text("raise ValueError('no column y')\n")
    failed = Job.create(CPU, str(bad), job_name="broken", in_process=True)
    return done, failed


def _read_back(uri):
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name("qhybrid")
    return client, {r.data.tags["qhybrid.job"]: r for r in client.search_runs([exp.experiment_id])}


def _check(client, runs):
    run = runs["exported"]
    assert run.info.run_name == "exported" and run.info.status == "FINISHED"
    assert run.data.params["hp.steps"] == "5" and run.data.params["device"] == CPU
    assert run.data.params["instance_type"] == "ml.m5.large" and run.data.params["world_size"] == "1"
    assert run.data.tags["qhybrid.state"] == "COMPLETED" and run.data.tags["qhybrid.backend"] == "local"
    assert run.data.tags["job.team"] == "qaoa"
    history = client.get_metric_history(run.info.run_id, "energy")
    assert [(m.step, m.value) for m in sorted(history, key=lambda m: m.step)] == [
        (i, -10 + 9 / (i + 1)) for i in range(5)]
    assert run.data.metrics["result.optimum"] == -10.0 and run.data.metrics["cost_usd"] > 0
    assert "billed_seconds" in run.data.metrics
    arts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"logs", "results", "spec.json", "environment.json"} <= arts
    log = client.download_artifacts(run.info.run_id, "logs/job.log")
    assert "<img src=x" in open(log, encoding="utf-8").read()
    failed = runs["broken"]
    assert failed.info.status == "FAILED" and "ValueError: no column y" in failed.data.tags["qhybrid.failure_reason"]


def test_export_to_a_file_store_and_read_back_again_replaces(two_jobs, tmp_path, monkeypatch, cli):
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 keeps its file store behind this
    uri = (tmp_path / "mlruns").as_uri()
    result = cli("jobs", "export", "--mlflow", uri, "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert set(doc["runs"]) == {"exported", "broken"}
    client, runs = _read_back(uri)
    _check(client, runs)
    again = cli("jobs", "export", "exported", "--mlflow", uri)
    assert again.exit_code == 0 and "exported -> run " in again.stdout
    client, runs = _read_back(uri)
    assert runs["exported"].info.run_id != doc["runs"]["exported"] and len(runs) == 2


def test_follow_logs_a_running_job_until_it_ends(tmp_path, live_script, monkeypatch):
    from qhybrid.mlflow_export import export

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    Job.create(CPU, str(live_script), job_name="running", hyperparameters={"steps": 8, "pause": 0.05})
    uri = (tmp_path / "mlruns").as_uri()
    runs = export(["running"], uri=uri, follow=True, poll=0.2)
    client, found = _read_back(uri)
    run = found["running"]
    assert run.info.run_id == runs["running"] and run.info.status == "FINISHED"
    assert run.data.tags["qhybrid.state"] == "COMPLETED"
    assert sorted(m.step for m in client.get_metric_history(run.info.run_id, "energy")) == list(range(8))


@pytest.mark.slow  # a fresh sqlite store runs MLflow's schema migrations (tens of seconds on a busy box)
def test_export_to_a_sqlite_store(two_jobs, tmp_path, cli):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    assert cli("jobs", "export", "--mlflow", uri).exit_code == 0
    _check(*_read_back(uri))


def test_export_errors_are_one_line(two_jobs, tmp_path, monkeypatch, cli):
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    result = cli("jobs", "export", "--mlflow", (tmp_path / "refused").as_uri())
    assert result.exit_code == 1 and result.stderr.startswith("qhybrid: error: MLflow at")
    assert len(result.stderr.strip().splitlines()) == 1
    assert cli("jobs", "export", "nope", "--mlflow", "x").exit_code == 1
