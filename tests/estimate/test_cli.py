"""``qhybrid estimate``, ``--dry-run`` and ``qhybrid instances`` through Typer's CliRunner on the real app."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from qhybrid.cli import app


@pytest.fixture
def invoke(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    runner = CliRunner()

    def run(*args):
        return runner.invoke(app, list(args))

    return run


def test_estimate_qaoa_table(invoke, cached):
    res = invoke("estimate", "qaoa", "--nodes", "20", "--edges", "30", "--preset", "seed-timing",
                 "--instances", "ml.m5.2xlarge,ml.p3.2xlarge")
    assert res.exit_code == 0, res.output
    assert "local" in res.output and "ml.p3.2xlarge" in res.output and "cheapest" in res.output
    assert "fastest" in res.output and "5 iterations" in res.output  # what the job counts: its 5 steps


def test_estimate_qaoa_to_convergence_counts_depths_and_starts(invoke, cached):
    doc = json.loads(invoke("estimate", "qaoa", "--instances", "ml.m5.2xlarge", "--json").output)
    # an iteration is what the job counts: one optimizer step of all 4 starts; p = 2: about 21 + 33
    assert doc["iterations"] == 21 + 33 and doc["iterations_expected"] is True
    assert doc["iterations_range"] == [32, 76]  # 80 % of measured runs
    note = next(n for n in doc["notes"] if "EXPECTED" in n)
    assert "not known" in note and "32-76" in note and "21 at depth 1, 33 a depth after" in note
    assert any("one optimizer step of all 4 starts" in n for n in doc["notes"])
    own = next(r for r in doc["rows"] if r["target"] == "ml.m5.2xlarge")
    low, high = own["total_seconds_range"]
    assert low < own["total_seconds"] < high and own["cost_usd_range"][0] <= own["cost_usd"] <= own["cost_usd_range"][1]
    # the time an iteration of all 4 starts takes, averaged over the run: the work of 182 one-start
    # iterations (4 * (21 * 1 + 33 * 2) / 2 + the p = 1 grid's 32 energies / 4) over 54 steps; the total adds
    # the evaluations past the steps to the job's seconds beyond its iterations (start-up, size): each stage's
    # energies of the 4 starts and the final state, forward passes of half a unit, depth 1 at half the cost:
    # (4 * (1 + 2) / 2 + 1) / 2 = 3.5 units
    fixed = own["fixed_seconds"]
    assert fixed > 0 and own["seconds_per_iteration"] * 54 == pytest.approx((own["total_seconds"] - fixed) * 182 / 185.5)
    one = json.loads(invoke("estimate", "qaoa", "--starts", "1", "--instances", "ml.m5.2xlarge", "--json").output)
    one_row = next(r for r in one["rows"] if r["target"] == "ml.m5.2xlarge")
    assert one["iterations"] == 54 and 3 < own["seconds_per_iteration"] / one_row["seconds_per_iteration"] < 4.5
    table = invoke("estimate", "qaoa", "--instances", "ml.m5.2xlarge")
    assert "expected ≈54 iterations" in table.output and "expected (a run to convergence)" in table.output
    exact = json.loads(invoke("estimate", "qaoa", "--iterations", "10", "--starts", "1", "--json").output)
    assert exact["iterations"] == 10 and not any("starts" in n for n in exact["notes"])
    assert exact["iterations_expected"] is False and exact["iterations_range"] is None
    assert "expected" not in invoke("estimate", "qaoa", "--iterations", "10", "--instances", "ml.m5.2xlarge").output


def test_dry_run_is_the_estimate_and_writes_nothing(invoke, cached, write_script, _isolated_home):
    est = json.loads(invoke("estimate", "qaoa", "--nodes", "14", "--edges", "20", "--json").output)
    dry = json.loads(invoke("qaoa", "--nodes", "14", "--edges", "20", "--dry-run", "--json").output)
    assert [r["target"] for r in dry["rows"]] == [r["target"] for r in est["rows"]]
    assert dry["iterations"] == est["iterations"]
    res = invoke("qml", "--wires", "8", "--dry-run")
    assert res.exit_code == 0 and "ml.p3.2xlarge" in res.output
    script = write_script("job.py", "print(1)\n")
    res = invoke("run", str(script), "--dry-run", "--json")
    assert res.exit_code == 0 and json.loads(res.output)["workload"] == "script"
    assert not (_isolated_home / "jobs").exists() or not any((_isolated_home / "jobs").iterdir())


def test_run_over_budget_is_refused_before_anything_is_written(invoke, cached, _isolated_home):
    import qhybrid.workloads.qaoa as wq

    argv = ("run", wq.__file__, "--entry-point", "qaoa", "--hp", "n_nodes=22", "--hp", "n_edges=33",
            "--hp", "iterations=2000", "--instance", "ml.m5.2xlarge", "--max-cost", "0.001")
    res = invoke(*argv)
    assert res.exit_code == 1 and "predicted" in res.output and "--force" in res.output
    assert not (_isolated_home / "jobs").exists() or not any((_isolated_home / "jobs").iterdir())


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
    # an epoch trains 144 of the 192 samples (val_fraction 0.25 held out): 5 steps of 32
    assert doc["world_size"] == 2 and doc["iterations"] == 5 and doc["instance_count"] == 2
    every = json.loads(invoke("estimate", "qml", "--wires", "8", "--batch-size", "32", "--data", "192",
                              "--epochs", "1", "--val-fraction", "0", "--instances", "ml.m5.4xlarge", "--json").output)
    assert every["iterations"] == 6


def test_the_seeds_classifier_is_cheaper_on_four_instances_than_on_one_gpu(invoke, cached):
    """lightning.gpu (not installed here) is estimated all the same, on a GPU instance; the seed's 26-qubit
    epoch on one GPU of one ml.p3.16xlarge costs several times its data-parallel epoch on 4 x 8 GPUs."""
    args = ("estimate", "qml", "--wires", "26", "--data", "192", "--val-fraction", "0", "--batch-size", "32",
            "--epochs", "1", "--device", "lightning.gpu", "--instances", "ml.p3.16xlarge", "--json")
    default = json.loads(invoke(*args).output)
    assert default["device"] == "local:pennylane/lightning.gpu" and default["instance_type"] == "ml.p3.2xlarge"
    one = json.loads(invoke(*args, "--instance", "ml.p3.16xlarge").output)
    four = json.loads(invoke(*args, "--instance", "ml.p3.16xlarge", "--data-parallel", "--instance-count", "4").output)
    r1, r4 = ([r for r in d["rows"] if r["target"] == "ml.p3.16xlarge"][0] for d in (one, four))
    assert one["world_size"] == 1 and four["world_size"] == 32
    assert r1["method"] == r4["method"] == "model" and any("uncalibrated" in n for n in r4["notes"])
    assert 5 < r1["cost_usd"] / r4["cost_usd"] < 8  # the seed: $20 against $2.8 (7.1x)
    assert any("all-reduce of 1903 parameters" in n for n in r4["notes"])


def test_estimate_run_of_an_unknown_script(invoke, write_script):
    script = write_script("job.py", "print(1)\n")
    res = invoke("estimate", "run", str(script), "--hp", "a=1", "--instances", "ml.m5.large", "--json")
    assert res.exit_code == 0, res.output
    assert {r["method"] for r in json.loads(res.stdout)["rows"]} == {"unknown"}
    assert "not calibrated yet" in res.stderr  # said before any wait, on stderr (stdout stays one document)


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


def test_jobs_show_has_the_prediction_beside_the_measurement(invoke, cached):
    import qhybrid.workloads.qaoa as wq

    res = invoke("run", wq.__file__, "--entry-point", "qaoa", "--hp", "n_nodes=8", "--hp", "n_edges=12",
                 "--hp", "iterations=3", "--instance", "ml.m5.2xlarge", "--max-cost", "10", "--name", "pred",
                 "--quiet")
    assert res.exit_code == 0, res.output
    shown = invoke("jobs", "show", "pred").output
    line = next(t for t in shown.splitlines() if t.startswith("estimate"))
    assert "predicted" in line and "/iteration" in line and "measured" in line and "x the prediction" in line
    assert "(by the estimate's model" in shown


@pytest.mark.parametrize("columns", [80, 120])
def test_estimate_fits_the_terminal_with_names_prices_and_times_whole(invoke, cached, monkeypatch, columns):
    """Piped (as under the runner) at the terminal's width: no line wider, nothing cut, every instance
    type, price and time whole; the least needed columns left out, and said so."""
    from qhybrid.jobs.instances import catalogue

    monkeypatch.setenv("COLUMNS", str(columns))
    res = invoke("estimate", "qaoa")
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines and max(len(line) for line in lines) <= columns and "…" not in res.stdout
    assert all(line == line.rstrip() for line in lines)  # no padding to the width
    doc = json.loads(invoke("estimate", "qaoa", "--json").stdout)
    names = set(catalogue()) | {"local"}
    rows = {line.split()[0]: line for line in lines if line.split() and line.split()[0] in names}
    assert set(rows) == names
    own = next(r for r in doc["rows"] if r["target"] == "ml.m5.2xlarge")
    assert f"${own['cost_usd']:.6f}" in rows["ml.m5.2xlarge"] and "qhybrid.cpu" in rows["ml.m5.2xlarge"]
    assert "ms" in rows["ml.m5.2xlarge"] and " s " in rows["ml.m5.2xlarge"] + " "
    if columns == 80:
        assert "left out to fit 80 columns: memory, how" in " ".join(lines)
    else:
        assert "memory" in lines[next(i for i, l in enumerate(lines) if l.startswith("target"))]
