"""qhybrid.braket.hybrid_job: Braket's keywords, AwsQuantumJob / LocalQuantumJob returned."""
from __future__ import annotations

import pytest

from qhybrid.braket import AwsQuantumJob, LocalQuantumJob, StoppingCondition, hybrid_job

from braketkit import QHYBRID_CPU


def test_local_true_blocks_and_returns_a_local_job(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)

    @hybrid_job(device=QHYBRID_CPU, local=True, tags={"k": "v"}, image_uri="img:1")
    def add(a, b=2):
        print("adding", flush=True)
        return a + b

    job = add(1)
    assert isinstance(job, LocalQuantumJob) and job.state() == "COMPLETED"
    assert "adding" in capsys.readouterr().out
    assert job.result() == {"result": 3} and job.spec().tags == {"k": "v"}
    assert job.spec().hyperparameters == {"a": "1", "b": "2"}


def test_remote_style_returns_aws_job_and_stopping_condition_applies(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    @hybrid_job(device=None, stopping_condition=StoppingCondition(maxRuntimeInSeconds=2), quiet=True)
    def sleeps():
        import time

        time.sleep(30)

    job = sleeps()
    assert isinstance(job, AwsQuantumJob)
    with pytest.raises(RuntimeError, match="max_runtime of 2 s exceeded"):
        job.result(poll_timeout_seconds=60)


def test_returned_dict_is_the_result_as_is(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    @hybrid_job(device=QHYBRID_CPU, wait_until_complete=True, quiet=True)
    def gives():
        return {"a": [1, 2], "b": "x"}

    assert gives().result() == {"a": [1, 2], "b": "x"}


def test_exported_notebook_without_main_guard_submits_once(tmp_path):
    """A notebook saved as a .py file and run with python: the job runs the function, not the file."""
    import subprocess
    import sys

    script = tmp_path / "exported_notebook.py"
    script.write_text(
        "from qhybrid.braket import hybrid_job\n"
        "SCALE = 3  # a global set when the file runs\n"
        "try:\n"
        "    @hybrid_job(device='local:qhybrid/qhybrid.cpu', wait_until_complete=True, quiet=True)\n"
        "    def scaled(x):\n"
        "        return {'value': x * SCALE}\n"
        "except ImportError:\n"
        "    raise\n"
        "job = scaled(2)\n"
        "print(job.name, job.result())\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("{'value': 6}")
    from qhybrid.submit import Job

    assert len(Job.list()) == 1
