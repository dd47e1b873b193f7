"""``qhybrid jobs ...``: list, show, logs, metrics, plots, result, wait, compare, cancel, rm."""
from __future__ import annotations

import json

import pytest


def _run(cli, script, name, *extra):
    result = cli("run", script, "--name", name, "--instance", "ml.m5.2xlarge", *extra)
    assert result.exit_code == 0, result.stderr
    return name


def _sleeper(tmp_path):
    path = tmp_path / "sleeper.py"
    path.write_text("import time\nprint('started', flush=True)\ntime.sleep(60)\n")
    return path


def test_list_newest_first_limit_columns_and_width(shared_jobs, cli):
    result = cli("jobs", "list")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    header = lines[0].split()
    assert header == ["NAME", "STATE", "DEVICE", "STARTED", "TIME", "RESULT", "COST"]  # INSTANCE gave way
    wide = cli("jobs", "list", env={"COLUMNS": "120"}).stdout.splitlines()
    assert wide[0].split() == ["NAME", "STATE", "DEVICE", "INSTANCE", "STARTED", "TIME", "RESULT", "COST"]
    assert "ml.m5.2xlarge" in wide[2] and max(len(line) for line in wide) <= 120
    names = [line.split()[0] for line in lines[2:]]
    assert names == ["third-job", "second-job", "first-job"]
    assert "COMPLETED" in lines[2] and "qhybrid.cpu" in lines[2] and "loss 1" in lines[2]
    assert "\x1b[" not in result.stdout  # plain: NO_COLOR, not a terminal
    result = cli("jobs", "list", "--limit", "2")
    assert [line.split()[0] for line in result.stdout.splitlines()[2:]] == ["third-job", "second-job"]
    assert "1 older jobs not shown" in result.stderr
    docs = json.loads(cli("jobs", "list", "--json", "-n", "0").stdout)
    assert [d["name"] for d in docs] == ["third-job", "second-job", "first-job"] and docs[0]["key_metric"] == "loss 1"


def test_show_has_environment_and_cost(shared_jobs, cli):
    result = cli("jobs", "show", "first-job")
    assert result.exit_code == 0
    text = result.stdout
    for words in ("COMPLETED", "environment", "qhybrid 0.1.0", "command line", "cost", "hyperparameters"):
        assert words in text
    assert "max_runtime 432000 s (the default, 5 days)" in text  # Braket's default, applied and shown
    doc = json.loads(cli("jobs", "show", "first-job", "--json").stdout)
    assert doc["environment"]["packages"]["qhybrid"] and doc["environment"]["cpu_count"] >= 1


def test_logs_and_follow_a_finished_job(shared_jobs, cli):
    result = cli("jobs", "logs", "second-job")
    assert result.exit_code == 0 and "loss=1;" in result.stdout
    assert cli("jobs", "logs", "-f", "second-job").exit_code == 0


def test_logs_follow_exits_with_the_outcome(tmp_path, cli):
    assert cli("run", _sleeper(tmp_path), "--no-wait", "--name", "bg").exit_code == 0
    assert cli("jobs", "cancel", "bg").stdout.strip() == "bg CANCELLED"
    result = cli("jobs", "logs", "-f", "bg")
    assert result.exit_code == 1 and "CANCELLED" in result.stderr


def test_metrics_one_row_per_iteration(shared_jobs, cli):
    result = cli("jobs", "metrics", "third-job")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["iter", "t_s", "loss", "iter_s"]
    rows = [line.split() for line in lines[2:]]
    assert [r[0] for r in rows] == ["0", "1", "2"] and [r[2] for r in rows] == ["3", "2", "1"]
    cols = json.loads(cli("jobs", "metrics", "third-job", "--json").stdout)
    assert cols["iteration_number"] == [0, 1, 2] and cols["loss"] == [3, 2, 1] and cols["t_s"][0] == 0
    raw = json.loads(cli("jobs", "metrics", "third-job", "--json", "--metric-type", "TIMESTAMP").stdout)
    assert len(raw["loss"]) == 6 and [v for v in raw["loss"] if v is not None] == [3, 2, 1]  # half-empty rows


def test_metrics_plot_into_a_missing_folder_is_one_line(shared_jobs, cli, tmp_path):
    target = tmp_path / "missing" / "m.png"
    result = cli("jobs", "metrics", "third-job", "--plot", target)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.stderr.strip().splitlines() == [
        f"qhybrid: error: --plot {str(target)!r}: the folder {str(target.parent)!r} does not exist (create it first)"]
    assert not result.stdout  # refused before any table was printed


def test_result_and_wait(shared_jobs, cli):
    assert json.loads(cli("jobs", "result", "second-job").stdout) == {"x": "2"}
    result = cli("jobs", "wait", "first-job", "second-job", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout) == {"first-job": "COMPLETED", "second-job": "COMPLETED"}


def test_wait_timeout_with_one_still_running(script, tmp_path, cli):
    _run(cli, script, "done-1")
    assert cli("run", _sleeper(tmp_path), "--no-wait", "--name", "slow").exit_code == 0
    result = cli("jobs", "wait", "done-1", "slow", "--timeout", "1")
    assert result.exit_code == 1 and "RUNNING" in result.stdout


def test_compare_side_by_side(shared_jobs, cli):
    result = cli("jobs", "compare", "first-job", "third-job")
    assert result.exit_code == 0
    rows = {line.split()[0] + (" " + line.split()[1] if line.startswith(("hp", "final", "best")) else ""): line.split()
            for line in result.stdout.splitlines()[2:] if line.strip()}
    assert rows["hp x"][-2:] == ["1", "3"]
    assert rows["final loss"][-2:] == ["1", "1"] and rows["best loss"][-2:] == ["1", "1"]
    doc = json.loads(cli("jobs", "compare", "first-job", "third-job", "--json").stdout)
    assert doc["hp x"] == {"first-job": "1", "third-job": "3"}


def test_compare_shows_what_a_sweep_varied(shared_jobs, cli):
    text = cli("jobs", "compare", "first-job", "second-job").stdout
    assert "hp x" in text and "hp y" not in text
    assert "hp y" in cli("jobs", "compare", "first-job", "second-job", "--all").stdout


def test_rm(script, cli):
    _run(cli, script, "gone")
    assert cli("jobs", "rm", "gone").exit_code == 0
    result = cli("jobs", "show", "gone")
    assert result.exit_code == 1 and "no job named 'gone'" in result.stderr


@pytest.mark.parametrize("argv", [["jobs", "show"], ["jobs", "wait"], ["jobs", "compare"]])
def test_missing_names_are_usage_errors(argv, cli):
    result = cli(*argv)
    assert result.exit_code == 1 and result.stderr.startswith("qhybrid: error: Missing argument")


def test_list_by_tags_all_must_match_and_show_has_tags(shared_jobs, cli):
    names = lambda *argv: [d["name"] for d in json.loads(cli("jobs", "list", "--json", *argv).stdout)]  # noqa: E731
    assert names("--tag", "team=qml") == ["second-job", "first-job"]
    assert names("--tag", "team=qml", "--tag", "stage=1") == ["first-job"]
    assert names("--tag", "team=other") == [] and len(names()) == 3
    result = cli("jobs", "list", "--tag", "team=qml")
    assert [line.split()[0] for line in result.stdout.splitlines()[2:]] == ["second-job", "first-job"]
    assert cli("jobs", "list", "--tag", "team").exit_code == 1
    rows = [line.split(None, 1) for line in cli("jobs", "show", "first-job").stdout.splitlines()]
    assert ["tags", "team=qml  stage=1"] in rows and ["dependencies", "the caller's interpreter"] in rows
    assert not any(r and r[0] == "tags" for r in (line.split(None, 1) for line in
                                                   cli("jobs", "show", "third-job").stdout.splitlines()))
    doc = json.loads(cli("jobs", "show", "first-job", "--json").stdout)
    assert doc["tags"] == {"team": "qml", "stage": "1"} and doc["dependency_environment"] is None
