"""``qhybrid qml``."""
from __future__ import annotations

import json

import pytest

from qhybrid.cli import build_parser, main
from qhybrid.cli.qml import job_kwargs, progress
from qhybrid.cli.workload import CPU_INSTANCE, GPU_INSTANCE
from qhybrid.errors import SpecError


def _kwargs(*argv):
    return job_kwargs(build_parser().parse_args(["qml", *argv]))


def test_defaults_and_data_parallel_options():
    kw = _kwargs("--device", "local:qhybrid/qhybrid.cpu")
    assert kw["entry_point"] == "qml" and kw["source_module"].endswith("workloads/qml.py")
    assert kw["instance_config"].instanceType == CPU_INSTANCE and "distribution" not in kw
    assert kw["hyperparameters"]["nwires"] == "10"
    kw = _kwargs("--device", "local:qhybrid/qhybrid.cpu", "--processes-per-instance", "2", "--instance-count", "2")
    assert kw["distribution"] == "data_parallel" and kw["processes_per_instance"] == 2
    assert kw["instance_config"].instanceCount == 2
    kw = _kwargs("--device", "local:qhybrid/qhybrid.gpu")
    assert kw["instance_config"].instanceType == GPU_INSTANCE


@pytest.mark.parametrize("argv, words", [
    (["--wires", "3"], "one wire"),
    (["--instance-count", "2"], "needs --data-parallel"),
    (["--data", "500"], "between 1 and 208"),
])
def test_bad_arguments_are_caught_before_submitting(argv, words):
    with pytest.raises(SpecError, match=words):
        _kwargs("--device", "local:qhybrid/qhybrid.cpu", *argv)


def test_progress_prints_one_line_per_epoch(capsys):
    p = progress(3)
    p("Metrics - timestamp=1; Loss=0.25; iteration_number=2;")
    p("Metrics - timestamp=1; Accuracy=0.5; iteration_number=2;")
    p("[rank 1] Metrics - timestamp=1; Loss=9; iteration_number=2; rank=1;")
    p("Metrics - timestamp=1; epoch_seconds=0.125; iteration_number=2;")
    p("hello")
    err = capsys.readouterr().err.splitlines()
    assert err == ["epoch 2/3  loss 0.25000  accuracy 0.500  0.12 s", "hello"]


def test_qml_command_runs_a_job(capsys):
    code = main(["qml", "--wires", "4", "--data", "16", "--batch-size", "8", "--epochs", "2",
                 "--device", "local:qhybrid/qhybrid.cpu", "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out.strip().splitlines()[-1])
    assert doc["world_size"] == 1 and len(doc["losses"]) == 2
    assert "cost: $" in out.err
    assert "epoch 2/2" in out.err
