"""``qhybrid estimate`` and ``qhybrid instances`` through Typer's CliRunner (cli/estimate.py's register)."""
from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from qhybrid.cli.estimate import register


@pytest.fixture
def invoke():
    app = typer.Typer()
    register(app)
    runner = CliRunner()

    def run(*args):
        return runner.invoke(app, list(args))

    return run


def test_estimate_qaoa_table(invoke, cached):
    res = invoke("estimate", "qaoa", "--nodes", "20", "--edges", "30", "--instances", "ml.m5.2xlarge,ml.p3.2xlarge")
    assert res.exit_code == 0, res.output
    assert "local" in res.output and "ml.p3.2xlarge" in res.output and "cheapest" in res.output
    assert "fastest" in res.output and "6 iterations" in res.output


def test_estimate_qaoa_json_is_one_document(invoke, cached):
    res = invoke("estimate", "qaoa", "--nodes", "16", "--cpu", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert {r["target"] for r in doc["rows"]} >= {"local", "ml.m5.2xlarge", "ml.c5.xlarge"}
    assert not any(r["device"].endswith("gpu") for r in doc["rows"])
    assert doc["cheapest"] and doc["fastest"]


def test_estimate_qml_data_parallel(invoke, cached):
    res = invoke("estimate", "qml", "--wires", "8", "--batch-size", "32", "--data", "192", "--epochs", "1",
                 "--instance-count", "2", "--data-parallel", "--instances", "ml.m5.4xlarge", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["world_size"] == 2 and doc["iterations"] == 6 and doc["instance_count"] == 2


def test_estimate_run_of_an_unknown_script(invoke, write_script):
    script = write_script("job.py", "print(1)\n")
    res = invoke("estimate", "run", str(script), "--hp", "a=1", "--instances", "ml.m5.large", "--json")
    assert res.exit_code == 0, res.output
    assert {r["method"] for r in json.loads(res.output)["rows"]} == {"unknown"}


def test_errors_are_one_line(invoke):
    res = invoke("estimate", "qaoa", "--instances", "ml.m5.2xlarg")
    assert res.exit_code == 1 and "qhybrid: error: unknown instance type 'ml.m5.2xlarg'" in res.output
    res = invoke("estimate", "qml", "--instance-count", "2")
    assert res.exit_code == 1 and "needs --data-parallel" in res.output
    res = invoke("estimate", "run", "nope.py")
    assert res.exit_code == 1 and "does not exist" in res.output


def test_instances_shows_kind_source_date_and_marks_approximate(invoke):
    res = invoke("instances", "--json")
    assert res.exit_code == 0
    rows = {r["type"]: r for r in json.loads(res.output)}
    assert len(rows) == 58 and rows["ml.c5.xlarge"]["approximate"] and rows["ml.c5n.xlarge"]["usd_per_minute"] is None
    table = invoke("instances", "--cpu").output
    assert "≈0.00340" in table and "sagemaker-training" in table and "2026-08-11" in table
    assert "ml.p3.2xlarge" not in table and "unknown" in table


def test_estimate_run_of_our_workload_uses_the_model(invoke, cached):
    import qhybrid.workloads.qaoa as wq

    res = invoke("estimate", "run", wq.__file__, "--hp", "n_nodes=12", "--hp", "n_edges=18",
                 "--instances", "ml.m5.large", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["workload"] == "qaoa" and {r["method"] for r in doc["rows"]} == {"model"}
