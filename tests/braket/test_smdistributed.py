"""The smdistributed stand-in: a script written against SageMaker's data-parallel API trains on 2 CPU
processes with the same losses as the same script on qhybrid's own data-parallel path."""
from __future__ import annotations

import importlib.util

import pytest

from qhybrid.braket import AwsQuantumJob, InstanceConfig

from braketkit import QHYBRID_CPU, SONAR

HP = {"nwires": 2, "ndata": 16, "batch_size": 8, "epochs": 3, "gamma": 0.99, "lr": 0.1, "seed": 7}


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("smdistributed") is not None, reason="the real smdistributed is installed")
def test_standin_losses_match_our_own_ddp_path(example):
    work = example("parallel")
    (work / "data").mkdir()
    (work / "data" / "sonar.all-data").write_text(SONAR.read_text())
    losses = {}
    for entry in ("train_dp", "train_dp_own"):
        job = AwsQuantumJob.create(
            device=QHYBRID_CPU, source_module="qml_script", entry_point=f"qml_script.{entry}",
            hyperparameters=HP, input_data={"input-data": "data/sonar.all-data"},
            instance_config=InstanceConfig(instanceType="ml.m5.xlarge", instanceCount=2),
            distribution="data_parallel", wait_until_complete=True, quiet=True,
        )
        assert job.state() == "COMPLETED", job.describe()["failure_reason"]
        assert job.result()["world_size"] == 2
        losses[entry] = job.metrics(metric_type="iteration_number")["Loss"]
        log = job.run_log
        assert "dp_info: {'world_size': 2, 'rank': 0, 'local_rank': 0}" in log
        assert "[rank 1] dp_info: {'world_size': 2, 'rank': 1, 'local_rank': 0}" in log
    assert len(losses["train_dp"]) == HP["epochs"]
    assert losses["train_dp"] == pytest.approx(losses["train_dp_own"], abs=1e-12)


def test_standin_only_on_data_parallel_jobs(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text("import importlib.util\nfrom qhybrid.braket import save_job_result\n"
                      "save_job_result({'found': importlib.util.find_spec('smdistributed') is not None})\n")
    single = AwsQuantumJob.create(device=QHYBRID_CPU, source_module=str(script), wait_until_complete=True, quiet=True)
    assert single.result() == {"found": False}
    dp = AwsQuantumJob.create(device=QHYBRID_CPU, source_module=str(script), distribution="data_parallel",
                              wait_until_complete=True, quiet=True)
    assert dp.result() == {"found": True}
