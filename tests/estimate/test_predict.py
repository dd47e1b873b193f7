"""Predictions: rows, sorting, marks, memory fits, unknown prices and times, data parallel, history."""
from __future__ import annotations

import math

import pytest

import qhybrid.workloads.qaoa as wq
import qhybrid.workloads.qml as wm
from qhybrid.errors import SpecError
from qhybrid.estimate import estimate_job, summary, to_json
from qhybrid.estimate.render import format_cost
from qhybrid.jobs import InstanceConfig


def qaoa(n=20, instance="ml.m5.2xlarge", device="local:qhybrid/qhybrid.cpu", iterations=10, count=1):
    hp = {"n_nodes": str(n), "n_edges": str(int(1.5 * n)), "n_layers": "2", "iterations": str(iterations),
          "starts": "1"}
    return {"device": device, "source_module": wq.__file__, "entry_point": "qaoa", "hyperparameters": hp,
            "instance_config": InstanceConfig(instanceType=instance, instanceCount=count)}


def test_one_row_per_instance_and_local_sorted_by_cost(calibration):
    est = estimate_job(qaoa(), calibration=calibration)
    assert len(est.rows) == 59 and est.row("local").cost_usd == 0.0
    assert est.iterations == 10 and est.workload == "qaoa"  # the job's own count (one start: its steps)
    known = [r.cost_usd for r in est.rows if r.cost_usd is not None and r.target != "local"]
    assert known == sorted(known)
    costs = [r.cost_usd for r in est.rows]
    first_unknown = costs.index(None)
    assert all(c is None for c in costs[first_unknown:])  # unknown prices last, never zero
    cheapest = min((r for r in est.rows if r.cost_usd and r.target != "local"), key=lambda r: r.cost_usd)
    assert est.cheapest == cheapest.target
    assert est.fastest == min(est.rows, key=lambda r: r.total_seconds or math.inf).target


def test_instances_and_gpu_cpu_filters(calibration):
    est = estimate_job(qaoa(), instances=["ml.p3.2xlarge"], calibration=calibration)
    assert {r.target for r in est.rows} == {"ml.p3.2xlarge", "ml.m5.2xlarge", "local"}  # the job's own is kept
    assert est.row("ml.p3.2xlarge").device == "local:qhybrid/qhybrid.gpu"  # qhybrid follows the GPUs
    assert est.row("ml.m5.2xlarge").device == "local:qhybrid/qhybrid.cpu"
    gpus = estimate_job(qaoa(), gpu=True, calibration=calibration, local=False)
    assert all(r.target == "ml.m5.2xlarge" or "p" in r.target.split(".")[1][:2] or ".g" in r.target
               for r in gpus.rows)
    with pytest.raises(SpecError, match="--gpu and --cpu"):
        estimate_job(qaoa(), gpu=True, cpu=True, calibration=calibration)


def test_approximate_prices_are_flagged(calibration):
    est = estimate_job(qaoa(), instances=["ml.c5.xlarge", "ml.m5.xlarge"], calibration=calibration)
    assert est.row("ml.c5.xlarge").approximate and not est.row("ml.m5.xlarge").approximate
    assert format_cost(est.row("ml.c5.xlarge")).startswith("≈$")
    assert est.row("ml.m5.xlarge").price_kind == "braket"


def test_memory_does_not_fit_on_a_small_instance(calibration):
    est = estimate_job(qaoa(n=31, instance="ml.m5.large"), instances=["ml.m5.24xlarge"], calibration=calibration)
    small = est.row("ml.m5.large")
    assert small.fits is False and small.needed_bytes > small.available_bytes
    assert any("needs" in n for n in small.notes)
    assert est.row("ml.m5.24xlarge").fits is True
    assert est.cheapest != "ml.m5.large" and est.fastest != "ml.m5.large"


def test_gpu_device_on_a_cpu_instance_cannot_run(calibration):
    est = estimate_job(qaoa(device="local:pennylane/lightning.gpu", instance="ml.p3.2xlarge"),
                       instances=["ml.m5.2xlarge"], calibration=calibration)
    assert est.row("ml.m5.2xlarge").fits is False and est.row("ml.m5.2xlarge").cost_usd is None
    assert est.row("ml.p3.2xlarge").fits is True and est.row("ml.p3.2xlarge").method == "model"


def test_more_qubits_take_longer(calibration):
    t = [estimate_job(qaoa(n=n), instances=[], calibration=calibration, local=False)
         .row("ml.m5.2xlarge").seconds_per_iteration for n in (16, 20, 24)]
    assert t[0] < t[1] < t[2]


def test_data_parallel_splits_the_batch_and_adds_an_all_reduce(calibration):
    hp = {"nwires": "12", "batch_size": "64", "ndata": "192", "epochs": "1"}
    base = {"device": "local:qhybrid/qhybrid.cpu", "source_module": wm.__file__, "entry_point": "qml",
            "hyperparameters": hp}
    one = estimate_job({**base, "instance_config": InstanceConfig(instanceType="ml.m5.2xlarge")},
                       instances=[], calibration=calibration, local=False)
    four = estimate_job({**base, "instance_config": InstanceConfig(instanceType="ml.m5.2xlarge", instanceCount=4),
                         "distribution": "data_parallel"}, instances=[], calibration=calibration, local=False)
    assert four.world_size == 4 and one.world_size == 1 and four.iterations == one.iterations == 3
    r1, r4 = one.row("ml.m5.2xlarge"), four.row("ml.m5.2xlarge")
    assert r4.seconds_per_iteration < r1.seconds_per_iteration
    assert any("all-reduce" in n for n in r4.notes) and r4.count == 4


def test_script_without_history_is_unknown_and_calibrates_nothing(write_script, _isolated_home):
    script = write_script("train.py", "print('hi')\n")
    est = estimate_job({"device": "local:qhybrid/qhybrid.cpu", "source_module": str(script)}, instances=["ml.m5.large"])
    assert est.workload == "script" and est.iterations is None
    row = est.row("ml.m5.large")
    assert (row.method, row.seconds_per_iteration, row.total_seconds, row.cost_usd) == ("unknown", None, None, None)
    assert not (_isolated_home / "calibration.json").exists()


def test_script_with_history_is_predicted_from_it(write_script, calibration):
    from qhybrid.submit import Job

    script = write_script("train.py", """
        from qhybrid.jobs import log_metric
        for i in range(4):
            log_metric("loss", 1.0 / (i + 1), iteration_number=i)
    """)
    kw = {"device": "local:qhybrid/qhybrid.cpu", "source_module": str(script), "hyperparameters": {"a": "1"}}
    Job.create(**kw, in_process=True)
    est = estimate_job(kw, instances=["ml.m5.large"], calibration=calibration)
    assert est.row("local").method == "history" and est.row("local").total_seconds >= 0
    assert est.row("ml.m5.large").seconds_per_iteration == pytest.approx(est.row("ml.m5.large").total_seconds / 4)
    other = estimate_job({**kw, "hyperparameters": {"a": "2"}}, instances=["ml.m5.large"], calibration=calibration)
    assert other.row("local").method == "unknown"


def test_json_and_summary(calibration):
    import json

    est = estimate_job(qaoa(), instances=["ml.p3.2xlarge"], calibration=calibration)
    doc = json.loads(to_json(est))
    assert doc["instance_type"] == "ml.m5.2xlarge" and len(doc["rows"]) == 3
    assert summary(est).startswith("predicted on 1 x ml.m5.2xlarge:")
    with pytest.raises(SpecError, match="no estimate for 'ml.c5.xlarge'"):
        est.row("ml.c5.xlarge")


def test_qml_iteration_carries_its_share_of_the_epochs_evaluation(calibration):
    """Per iteration: the step plus the held-out samples' evaluation (after every epoch) over the epoch's steps;
    nothing held out, nothing evaluated."""
    from qhybrid.estimate import model, work
    from qhybrid.estimate.hardware import instance_machine
    from qhybrid.jobs.instances import get_instance

    def row(val_fraction):
        hp = {"nwires": "12", "batch_size": "16", "ndata": "208", "epochs": "2", "val_fraction": val_fraction}
        kw = {"device": "local:qhybrid/qhybrid.cpu", "source_module": wm.__file__, "entry_point": "qml",
              "hyperparameters": hp, "instance_config": InstanceConfig(instanceType="ml.m5.2xlarge")}
        return estimate_job(kw, instances=[], calibration=calibration, local=False)

    held, none = row("0.25"), row("0")
    machine = instance_machine(get_instance("ml.m5.2xlarge"))
    step = model.qml_cpu_seconds(work.qml_work(12, 16), machine, calibration, batch=16, n_wires=12)
    ev = model.qml_eval_cpu_seconds(work.qml_eval_work(12, 52), machine, calibration, samples=52, n_wires=12)
    assert none.row("ml.m5.2xlarge").seconds_per_iteration == pytest.approx(step)
    assert held.iterations == 2 * 10 and none.iterations == 2 * 13
    assert held.row("ml.m5.2xlarge").seconds_per_iteration == pytest.approx(step + ev / 10)
    assert ev > calibration.qml_eval_s and held.row("ml.m5.2xlarge").needed_bytes > none.row("ml.m5.2xlarge").needed_bytes
