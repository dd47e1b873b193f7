"""The estimate beside a job: budget refusal before anything is written, the stored prediction, describe()."""
from __future__ import annotations

import pytest

import qhybrid.workloads.qaoa as wq
from qhybrid.estimate.jobs import BudgetError, compare, read_prediction
from qhybrid.jobs import InstanceConfig
from qhybrid.submit import Job


def _nothing_written(home) -> bool:
    jobs = home / "jobs"
    if jobs.exists() and any(jobs.iterdir()):
        return False
    if (home / "index.db").exists():
        from qhybrid.jobs import store

        return store.rows() == []
    return True


def qaoa(**extra):
    hp = {"n_nodes": "8", "n_edges": "12", "n_layers": "1", "iterations": "3"}
    return {"device": "local:qhybrid/qhybrid.cpu", "source_module": wq.__file__, "entry_point": "qaoa",
            "hyperparameters": hp, "instance_config": InstanceConfig(instanceType="ml.m5.2xlarge"), **extra}


def test_over_budget_is_refused_with_the_predicted_cost(cached, _isolated_home):
    with pytest.raises(BudgetError, match=r"predicted cost \$0\.\d+ exceeds max_cost \$0\.0002 .*force=True"):
        Job.create(**qaoa(max_cost=2e-4))
    assert _nothing_written(_isolated_home)


def test_force_submits_and_the_prediction_is_stored_and_shown(cached):
    job = Job.create(**qaoa(max_cost=2e-4), in_process=True, force=True)
    prediction = read_prediction(job.folder)
    assert prediction["instance_type"] == "ml.m5.2xlarge" and prediction["workload"] == "qaoa"
    info = job.describe()
    assert info["predicted"]["method"] == "model" and info["predicted"]["cost_usd"] > 2e-4
    assert info["measured_seconds"] is not None and info["measured_over_predicted"] > 0
    assert info["cost_on_other_instances_basis"] == "model"


def test_within_budget_runs_with_its_prediction(cached):
    job = Job.create(**qaoa(max_cost=10.0), in_process=True)
    info = job.describe()
    assert info["state"] == "COMPLETED" and info["predicted"]["total_seconds"] > 0
    assert info["measured_seconds_per_iteration"] > 0  # the median of the workload's iteration_seconds
    others = info["cost_on_other_instances_usd"]
    assert "ml.m5.2xlarge" not in others and "ml.p3.2xlarge" in others and "ml.c5n.xlarge" not in others


def test_no_budget_and_no_calibration_predicts_by_the_nominal_model(_isolated_home):
    """Nothing is measured (no calibration file), yet the stored prediction and the cost line's other
    instances come from the model (marked uncalibrated), never from equal duration."""
    from qhybrid.cli.workload import _cost_line
    from qhybrid.estimate.render import predicted_line

    job = Job.create(**qaoa(), in_process=True)
    stored = read_prediction(job.folder)
    assert stored["calibrated"] is False and not (_isolated_home / "calibration.json").exists()
    assert any(note.startswith("NOT calibrated") for note in stored["notes"])
    info = job.describe()
    assert info["predicted"]["calibrated"] is False and info["cost_on_other_instances_basis"] == "model"
    assert "NOT calibrated" in predicted_line(info)
    assert info["cost_on_other_instances_usd"] and "by the estimate's model" in _cost_line(info)


def test_job_estimate_validates_like_create(cached):
    est = Job.estimate(**{k: v for k, v in qaoa().items()}, instances=["ml.p3.2xlarge"])
    assert est.row("ml.m5.2xlarge").cost_usd > 0
    from qhybrid.errors import InstanceError

    with pytest.raises(InstanceError, match="did you mean"):
        Job.estimate(**{**qaoa(), "instance_config": InstanceConfig(instanceType="ml.m5.2xlarg")})


def test_compare_scales_other_costs_by_the_model():
    prediction = {"rows": [
        {"target": "ml.m5.2xlarge", "total_seconds": 100.0, "seconds_per_iteration": 1.0, "cost_usd": 0.0128,
         "method": "model", "fits": True, "needed_bytes": 1},
        {"target": "ml.m5.4xlarge", "total_seconds": 50.0, "seconds_per_iteration": 0.5, "cost_usd": 0.0128,
         "method": "model", "fits": True, "needed_bytes": 1},
        {"target": "ml.m5.large", "total_seconds": 400.0, "seconds_per_iteration": 4.0, "cost_usd": 0.0128,
         "method": "model", "fits": False, "needed_bytes": 1}]}
    out = compare(prediction, instance_type="ml.m5.2xlarge", measured_seconds=200.0, billed_seconds=200,
                  instance_count=1)
    assert out["measured_over_predicted"] == 2.0
    assert out["cost_on_other_instances_usd"] == {"ml.m5.4xlarge": pytest.approx(100 * 0.01537 / 60)}


def test_compare_without_a_predicted_time_scales_this_run_by_core_speed():
    """No prediction (a script without history, an older job): this run is its own history, scaled by one
    core's peak (the same core costs the same seconds; equal duration is never assumed across generations)."""
    from qhybrid.estimate.hardware import instance_machine
    from qhybrid.jobs.instances import catalogue, ceil_seconds, cost

    for prediction in (None, {"rows": [{"target": "ml.m5.2xlarge", "total_seconds": None, "seconds_per_iteration": None,
                                        "cost_usd": None, "method": "unknown", "fits": None, "needed_bytes": None}]}):
        out = compare(prediction, instance_type="ml.m5.2xlarge", measured_seconds=100.0, billed_seconds=100,
                      instance_count=2)
        costs, cat = out["cost_on_other_instances_usd"], catalogue()
        assert out["cost_on_other_instances_basis"] == "this run" and "ml.m5.2xlarge" not in costs
        assert costs["ml.m5.4xlarge"] == pytest.approx(cost(100, cat["ml.m5.4xlarge"], 2))  # the same core
        ratio = instance_machine(cat["ml.m5.2xlarge"]).core_gflops / instance_machine(cat["ml.m4.4xlarge"]).core_gflops
        assert ratio != 1 and costs["ml.m4.4xlarge"] == pytest.approx(cost(ceil_seconds(100 * ratio), cat["ml.m4.4xlarge"], 2))


def test_predicted_line_for_jobs_show(cached):
    from qhybrid.estimate.render import predicted_line

    info = Job.create(**qaoa(), in_process=True).describe()
    line = predicted_line(info)
    assert line.startswith("predicted ") and "measured" in line and "x the prediction" in line
    assert predicted_line({"predicted": None}) is None


def test_measured_per_iteration_from_metrics(tmp_path):
    import json

    from qhybrid.estimate.jobs import measured_per_iteration

    (tmp_path / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in [
        {"timestamp": 1, "iteration_number": 1, "epoch_seconds": 2.0},
        {"timestamp": 2, "iteration_number": 2, "epoch_seconds": 4.0},
        {"timestamp": 2, "iteration_number": 2, "epoch_seconds": 9.0, "rank": 1}]) + "\n")
    assert measured_per_iteration(tmp_path, {"iterations": 20}) == 0.3  # median 3 s over 10 steps per epoch
    assert measured_per_iteration(tmp_path, None) is None


def test_a_failing_estimate_does_not_block_the_job(cached, monkeypatch):
    from qhybrid.errors import JobError
    from qhybrid.submit import budget

    def broken(*args, **kwargs):
        raise JobError("estimate probe failed: no device")

    monkeypatch.setattr(budget, "estimate_spec", broken)
    job = Job.create(**qaoa(max_cost=10.0), in_process=True)
    assert job.state() == "COMPLETED" and read_prediction(job.folder) is None


def test_a_run_to_convergence_is_shown_as_expected(cached):
    from qhybrid.estimate import estimate_job
    from qhybrid.estimate.render import predicted_line, summary

    kwargs = qaoa()
    kwargs["hyperparameters"] = {k: v for k, v in kwargs["hyperparameters"].items() if k != "iterations"}
    est = estimate_job(kwargs, instances=[])
    assert est.iterations_expected and "expected: a run to convergence, 80 % of runs" in summary(est)
    out = compare(est.to_dict(), instance_type="ml.m5.2xlarge", measured_seconds=None, billed_seconds=None,
                  instance_count=1)
    assert out["predicted"]["iterations_expected"] is True and len(out["predicted"]["total_seconds_range"]) == 2
    assert "expected: a run to convergence" in predicted_line(out)
    fixed = compare(estimate_job(qaoa(), instances=[]).to_dict(), instance_type="ml.m5.2xlarge",
                    measured_seconds=None, billed_seconds=None, instance_count=1)
    assert fixed["predicted"]["iterations_expected"] is False and "expected" not in predicted_line(fixed)
