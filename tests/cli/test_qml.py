"""``qhybrid qml``: options to a job, bad combinations, a real (small) run."""
from __future__ import annotations

import json

import pytest

from qhybrid.cli.options import CPU_INSTANCE, GPU_INSTANCE
from qhybrid.cli.qml import job_kwargs
from qhybrid.errors import SpecError


def test_defaults_and_data_parallel_options():
    kw = job_kwargs(device="qhybrid.cpu")
    assert kw["entry_point"] == "qml" and kw["source_module"].endswith("workloads/qml.py")
    assert kw["instance_config"].instanceType == CPU_INSTANCE and "distribution" not in kw
    assert kw["hyperparameters"]["nwires"] == "10" and kw["hyperparameters"]["val_fraction"] == "0.25"
    kw = job_kwargs(device="qhybrid.cpu", processes_per_instance=2, instance_count=2)
    assert kw["distribution"] == "data_parallel" and kw["processes_per_instance"] == 2
    assert kw["instance_config"].instanceCount == 2
    assert job_kwargs(device="qhybrid.gpu")["instance_config"].instanceType == GPU_INSTANCE


@pytest.mark.parametrize("kwargs, words", [
    ({"wires": 3}, "one wire"),
    ({"instance_count": 2}, "needs --data-parallel"),
    ({"data": 500}, "between 1 and 208"),
    ({"val_fraction": 0.95}, "between 0.0 and 0.9"),
])
def test_bad_arguments_are_caught_before_submitting(kwargs, words):
    with pytest.raises(SpecError, match=words):
        job_kwargs(device="qhybrid.cpu", **kwargs)


def test_qml_command_runs_a_job(cli):
    result = cli("qml", "--wires", "4", "--data", "20", "--batch-size", "8", "--epochs", "2", "--device",
                 "QHYBRID.CPU".lower())
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("validation accuracy ") and "held-out" in result.stdout
    assert "epoch 2/2" in result.stderr and "val " in result.stderr and "cost: $" in result.stderr
    result = cli("qml", "--wires", "4", "--data", "20", "--batch-size", "8", "--epochs", "1", "--json")
    doc = json.loads(result.stdout)
    assert doc["result"]["n_val"] == 5 and doc["result"]["accuracy"] == doc["result"]["val_accuracy"]
