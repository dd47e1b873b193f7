"""The run / jobs / instances / devices commands, through cli.main and one real subprocess."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from qhybrid.cli import main

SCRIPT = """
    from qhybrid.jobs import hyperparameters, log_metric, save_job_result
    hp = hyperparameters()
    for i in range(3):
        log_metric("loss", 3 - i, iteration_number=i)
    save_job_result({"x": hp.get("x")})
"""


@pytest.fixture(autouse=True)
def _no_leftover_jobs(_isolated_home):
    """After each test, cancel whatever job still runs."""
    yield
    if (_isolated_home / "index.db").exists():
        from qhybrid.jobs import Job

        for job in Job.list():
            if job.folder.is_dir() and job.state() in ("QUEUED", "RUNNING"):
                job.cancel(timeout=5)


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "clijob.py"
    path.write_text(textwrap.dedent(SCRIPT))
    return path


def test_run_prints_result_cost_and_logs(script, capsys):
    code = main(["run", str(script), "--hp", "x=7", "--instance", "ml.m5.2xlarge", "--name", "cli-1"])
    out, err = capsys.readouterr()
    assert code == 0
    assert json.loads(out) == {"x": "7"}
    assert "Metrics - timestamp=" in err and "cost: $" in err and "same run on" in err


def test_run_json_output(script, capsys):
    assert main(["run", str(script), "--json", "--name", "cli-j"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["job"] == "cli-j" and out["state"] == "COMPLETED" and out["result"] == {"x": None}
    assert out["cost_usd"] == pytest.approx(out["billed_seconds"] * 0.00192 / 60)  # ml.m5.large: SageMaker training rate
    assert "ml.m5.2xlarge" in out["cost_on_other_instances_usd"]


def test_jobs_list_show_logs_metrics_result_rm(script, capsys, tmp_path):
    assert main(["run", str(script), "--name", "cli-2", "--hp", "x=1"]) == 0
    capsys.readouterr()
    assert main(["jobs", "list"]) == 0
    assert "cli-2" in capsys.readouterr().out
    assert main(["jobs", "list", "--json", "--state", "COMPLETED"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["name"] == "cli-2"
    assert main(["jobs", "show", "cli-2"]) == 0
    assert "COMPLETED" in capsys.readouterr().out
    assert main(["jobs", "logs", "cli-2"]) == 0
    assert "loss=1;" in capsys.readouterr().out
    plot = tmp_path / "m.png"
    assert main(["jobs", "metrics", "cli-2", "--json", "--plot", str(plot)]) == 0
    assert json.loads(capsys.readouterr().out)["loss"] == [3, 2, 1]
    assert plot.stat().st_size > 0
    assert main(["jobs", "result", "cli-2"]) == 0
    assert json.loads(capsys.readouterr().out) == {"x": "1"}
    assert main(["jobs", "rm", "cli-2"]) == 0
    assert main(["jobs", "show", "cli-2"]) == 1
    assert "no job named 'cli-2'" in capsys.readouterr().err


def test_failed_job_exits_1_with_reason(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text("raise RuntimeError('cli boom')\n")
    assert main(["run", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "FAILED: the job script exited with code 1: RuntimeError: cli boom" in err


def test_bad_input_is_one_line(script, capsys):
    assert main(["run", str(script), "--device", "local:qhybrid/qhybrid.tpu"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("qhybrid: error: unknown qhybrid simulator 'qhybrid.tpu'") and err.count("\n") == 1
    assert main(["run", str(script), "--hp", "novalue"]) == 1
    assert "KEY=VALUE" in capsys.readouterr().err


def test_no_wait_then_follow_and_cancel(script, tmp_path, capsys):
    sleeper = tmp_path / "sleeper.py"
    sleeper.write_text("import time\nprint('started', flush=True)\ntime.sleep(60)\n")
    assert main(["run", str(sleeper), "--no-wait", "--name", "bg"]) == 0
    assert capsys.readouterr().out.strip() == "bg"
    assert main(["jobs", "cancel", "bg"]) == 0
    assert "bg CANCELLED" in capsys.readouterr().out
    assert main(["jobs", "logs", "-f", "bg"]) == 0


def test_instances_and_devices(capsys):
    assert main(["instances"]) == 0
    out = capsys.readouterr().out
    assert "ml.p3.2xlarge" in out and "0.06375" in out and "unknown" in out
    assert main(["devices", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert "qhybrid.cpu" in info["devices"]["qhybrid"] and info["cuda"] in (True, False)


@pytest.mark.parametrize("argv", [["run"], ["jobs"], ["jobs", "list"], ["jobs", "show"], ["jobs", "logs"],
                                  ["jobs", "metrics"], ["jobs", "result"], ["jobs", "cancel"], ["jobs", "rm"],
                                  ["instances"], ["devices"]])
def test_help_everywhere(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main([*argv, "--help"])
    assert info.value.code == 0 and "usage: qhybrid" in capsys.readouterr().out


def test_console_script_runs_a_job(script):
    out = subprocess.run([sys.executable, "-m", "qhybrid", "run", str(script), "--hp", "x=3"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"x": "3"}


def test_run_data_parallel(tmp_path, capsys):
    ranks = tmp_path / "ranks.py"
    ranks.write_text("import os\nfrom qhybrid.jobs import save_job_result\n"
                     "if os.environ['RANK'] == '0':\n    save_job_result({'world': os.environ['WORLD_SIZE']})\n")
    assert main(["run", str(ranks), "--processes-per-instance", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["result"] == {"world": "2"}
