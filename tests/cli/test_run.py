"""``qhybrid run``: result on stdout, cost and progress on stderr, --json, --no-wait, failures."""
from __future__ import annotations

import json

import pytest

from qhybrid.cli.run import pairs
from qhybrid.errors import SpecError


def test_run_prints_result_then_cost(script, cli):
    result = cli("run", script, "--hp", "x=7", "--instance", "ml.m5.2xlarge", "--name", "cli-1")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {"x": "7"}
    assert "cost: $" in result.stderr and "same run on" in result.stderr
    elsewhere = " ".join(result.stderr.split("same run on", 1)[1].split())  # wrapped at words to 80 columns
    # a script without history has no predicted time: this run, scaled by core speed (never equal duration)
    assert elsewhere.count("ml.") == 3 and "this run scaled by each type's core speed" in elsewhere
    assert "more types: qhybrid jobs show cli-1 --json" in elsewhere
    lines = result.stderr.splitlines()  # the plain progress lines, one per iteration, with what it logged
    assert "iteration 0  loss 3  iteration_seconds 0.5" in lines and "iteration 2  loss 1  iteration_seconds 0.01" in lines


def test_run_json_is_one_document(script, cli):
    result = cli("run", script, "--json", "--name", "cli-j")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["job"] == "cli-j" and doc["state"] == "COMPLETED" and doc["result"] == {"x": None}
    assert doc["instance_type"] == "ml.m5.2xlarge"  # the default of run, qaoa and qml alike
    assert doc["cost_usd"] == pytest.approx(doc["billed_seconds"] * 0.00768 / 60)  # a Braket Hybrid Jobs rate
    assert "ml.m5.large" in doc["cost_on_other_instances_usd"]


def test_quiet_prints_only_the_result(script, cli):
    result = cli("run", script, "--quiet", "--hp", "x=2")
    assert result.exit_code == 0 and json.loads(result.stdout) == {"x": "2"}
    assert "Metrics" not in result.stderr and "submitted" not in result.stderr


def test_failed_job_exits_1_with_reason(tmp_path, cli):
    bad = tmp_path / "bad.py"
    bad.write_text("raise RuntimeError('cli boom')\n")
    result = cli("run", bad)
    assert result.exit_code == 1
    assert "FAILED: the job script exited with code 1: RuntimeError: cli boom" in result.stderr


def test_no_wait_prints_the_name(tmp_path, cli):
    sleeper = tmp_path / "sleeper.py"
    sleeper.write_text("import time\ntime.sleep(60)\n")
    result = cli("run", sleeper, "--no-wait", "--name", "bg")
    assert result.exit_code == 0 and result.stdout.strip() == "bg"
    result = cli("run", sleeper, "--no-wait", "--name", "bg2", "--json")
    assert json.loads(result.stdout)["job"] == "bg2"


def test_run_bare_device_and_data_parallel(tmp_path, cli):
    ranks = tmp_path / "ranks.py"
    ranks.write_text("import os\nfrom qhybrid.jobs import device, save_job_result\n"
                     "if os.environ['RANK'] == '0':\n"
                     "    save_job_result({'world': os.environ['WORLD_SIZE'], 'device': device()})\n")
    result = cli("run", ranks, "--processes-per-instance", "2", "--device", "default.qubit", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["result"] == {"world": "2", "device": "local:pennylane/default.qubit"}


def test_pairs():
    assert pairs(["a=1", "b=x=y"], "--hp") == {"a": "1", "b": "x=y"}
    with pytest.raises(SpecError, match="KEY=VALUE"):
        pairs(["novalue"], "--hp")


def test_run_tags_the_job(script, cli):
    from qhybrid.submit import Job

    result = cli("run", script, "--name", "tagged", "--tag", "team=qml", "--tag", "stage=2", "--json")
    assert result.exit_code == 0, result.stderr
    assert Job.get("tagged").spec().tags == {"team": "qml", "stage": "2"}
    result = cli("run", script, "--name", "badtag", "--tag", "novalue")
    assert result.exit_code == 1 and "qhybrid: error: --tag 'novalue' must look like KEY=VALUE" in result.stderr
