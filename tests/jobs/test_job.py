"""Job lifecycle with real subprocesses and a real SQLite store."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from qhybrid import InstanceConfig, Job
from qhybrid.errors import JobError
from qhybrid.jobs import store

from jobkit import CPU, FULL_SCRIPT, gone, read_pid, wait_for

SLEEPER = """
    import os, subprocess, sys, time
    from qhybrid.jobs import results_dir
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    (results_dir() / "child.pid").write_text(str(child.pid))
    (results_dir() / "pid").write_text(str(os.getpid()))
    print("sleeping", flush=True)
    time.sleep(60)
"""


def test_job_writes_results_metrics_checkpoints(write_script, tmp_path):
    script = write_script("full.py", FULL_SCRIPT)
    data = tmp_path / "data"
    data.mkdir()
    (data / "numbers.txt").write_text("1 2 3")
    lines = []
    job = Job.create(CPU, script, hyperparameters={"steps": 4}, input_data={"data": data},
                     instance_config=InstanceConfig(instanceType="ml.m5.2xlarge"), job_name="full-1")
    assert job.wait(timeout=30, stream=lines.append) is job
    assert job.state() == "COMPLETED"
    result = job.result()
    assert result["steps"] == 4 and result["data"] == ["1", "2", "3"] and result["name"] == "full-1"
    assert result["device"] == CPU
    assert int(result["threads"]) >= 1
    cols = job.metrics()
    assert cols["loss"] == [1.0, 0.5, 1 / 3, 0.25]
    assert cols["iteration_number"] == [0, 1, 2, 3]
    by_iter = job.metrics(metric_type="iteration_number")
    assert by_iter["iteration_number"] == [0, 1, 2, 3]
    assert any(line.startswith("Metrics - timestamp=") for line in lines)
    folder = store.job_dir("full-1")
    for part in ("spec.json", "source/full.py", "input/data/numbers.txt", "hyperparameters.json",
                 "results/results.json", "checkpoints/full-1_last.json", "logs/job.log", "metrics.jsonl"):
        assert (folder / part).exists(), part
    assert json.loads((folder / "hyperparameters.json").read_text()) == {"steps": "4"}
    persisted = json.loads((folder / "results" / "results.json").read_text())
    assert persisted["braketSchemaHeader"] == {"name": "braket.jobs_data.persisted_job_data", "version": "1"}
    assert persisted["dataFormat"] == "plaintext"
    info = job.describe()
    assert info["state"] == "COMPLETED" and info["billed_seconds"] >= 1
    assert info["estimated_cost_usd"] == pytest.approx(info["billed_seconds"] * 0.00768 / 60)
    assert "ml.p3.2xlarge" in info["cost_on_other_instances_usd"]
    assert info["failure_reason"] is None
    assert [j.name for j in Job.list()] == ["full-1"]
    assert Job.list(state="FAILED") == []


def test_failing_job_records_reason_and_traceback(write_script):
    script = write_script("boom.py", """
        def deep():
            raise ValueError("boom 42")
        print("before")
        deep()
    """)
    job = Job.create(CPU, script).wait(timeout=30)
    assert job.state() == "FAILED"
    info = job.describe()
    assert "ValueError: boom 42" in info["failure_reason"]
    assert "exited with code 1" in info["failure_reason"]
    assert info["traceback_tail"].startswith("Traceback (most recent call last)")
    assert "deep()" in info["traceback_tail"]
    with pytest.raises(JobError, match="boom 42"):
        job.result()


def test_function_entry_point_and_package_source(write_script, tmp_path):
    pkg = tmp_path / "mypkg"
    write_script("__init__.py", "", folder=pkg)
    write_script("helpers.py", "def double(x):\n    return 2 * x\n", folder=pkg)
    write_script("train.py", """
        from mypkg.helpers import double
        def main():
            return {"value": double(21)}
    """, folder=pkg)
    job = Job.create(CPU, pkg, entry_point="mypkg.train:main").wait(timeout=30)
    assert job.result() == {"value": 42}


def test_cancel_ends_the_process_tree(write_script):
    job = Job.create(CPU, write_script("sleeper.py", SLEEPER))
    results = store.job_dir(job.name) / "results"
    pid, child = read_pid(results / "pid"), read_pid(results / "child.pid")
    assert job.state() == "RUNNING"
    t0 = time.monotonic()
    assert job.cancel() == "CANCELLED"
    assert time.monotonic() - t0 < 6
    wait_for(lambda: gone(pid) and gone(child), timeout=5)
    assert job.describe()["failure_reason"] == "cancelled on request"


def test_max_runtime_stops_the_job(write_script):
    job = Job.create(CPU, write_script("sleeper.py", SLEEPER), max_runtime=1)
    pid = read_pid(store.job_dir(job.name) / "results" / "pid")
    job.wait(timeout=15)
    assert job.state() == "FAILED"
    assert "max_runtime of 1 s exceeded" in job.describe()["failure_reason"]
    wait_for(lambda: gone(pid), timeout=5)


def test_max_cost_stops_the_job(write_script, tmp_path, monkeypatch):
    prices = tmp_path / "prices.toml"
    prices.write_text('[prices]\n"ml.c5.xlarge" = 60.0  # 1 USD per second\n')
    monkeypatch.setenv("QHYBRID_PRICES", str(prices))
    job = Job.create(CPU, write_script("sleeper.py", SLEEPER), max_cost=1.0,
                     instance_config=InstanceConfig(instanceType="ml.c5.xlarge"))
    job.wait(timeout=15)
    info = job.describe()
    assert info["state"] == "FAILED"
    assert "max_cost of $1 reached" in info["failure_reason"]
    assert info["price_usd_per_minute"] == 60.0
    assert info["estimated_cost_usd"] >= 1.0


def test_resume_from_another_jobs_checkpoints(write_script):
    first = Job.create(CPU, write_script("first.py", """
        from qhybrid.jobs import save_job_checkpoint
        save_job_checkpoint({"step": 7, "weights": [0.1, 0.2]})
    """), job_name="first").wait(timeout=30)
    assert first.state() == "COMPLETED"
    second = Job.create(CPU, write_script("second.py", """
        from qhybrid.jobs import load_job_checkpoint, save_job_result
        state = load_job_checkpoint("first")
        save_job_result({"resumed_at": state["step"] + 1, "weights": state["weights"]})
    """), copy_checkpoints_from_job="first").wait(timeout=30)
    assert second.result() == {"resumed_at": 8, "weights": [0.1, 0.2]}


def test_two_jobs_at_once(write_script):
    script = write_script("full.py", FULL_SCRIPT)
    jobs = [Job.create(CPU, script, hyperparameters={"steps": n}) for n in (2, 5)]
    assert len({j.name for j in jobs}) == 2
    assert [j.wait(timeout=30).result()["steps"] for j in jobs] == [2, 5]


def test_concurrent_submissions_from_processes(write_script, home):
    script = write_script("full.py", FULL_SCRIPT)
    code = f"from qhybrid import Job; Job.create({CPU!r}, {str(script)!r}, in_process=True)"
    procs_ = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(3)]
    assert [p.wait(timeout=60) for p in procs_] == [0, 0, 0]
    assert sorted(j.state() for j in Job.list()) == ["COMPLETED"] * 3


def test_job_survives_its_caller(write_script):
    script = write_script("slow.py", """
        import time
        from qhybrid.jobs import save_job_result
        time.sleep(2.0)
        save_job_result({"done": True})
    """)
    code = f"from qhybrid import Job; print(Job.create({CPU!r}, {str(script)!r}).name)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True)
    job = Job.get(out.stdout.strip())
    assert job.state() in ("QUEUED", "RUNNING")
    assert job.wait(timeout=30).result() == {"done": True}


def test_killed_supervisor_marks_job_failed(write_script):
    job = Job.create(CPU, write_script("sleeper.py", SLEEPER))
    pid = read_pid(store.job_dir(job.name) / "results" / "pid")
    sup = store.get(job.name)["supervisor_pid"]
    os.kill(sup, signal.SIGKILL)
    wait_for(lambda: job.state() == "FAILED", timeout=10)
    assert "supervisor" in job.describe()["failure_reason"]
    wait_for(lambda: gone(pid), timeout=5)
    assert [j.state() for j in Job.list()] == ["FAILED"]


def test_wait_timeout_raises(write_script):
    job = Job.create(CPU, write_script("sleeper.py", SLEEPER))
    with pytest.raises(JobError, match="still"):
        job.wait(timeout=0.3)
    job.cancel()


def test_in_process_mode_runs_same_lifecycle(write_script, monkeypatch):
    monkeypatch.setenv("AMZN_BRAKET_JOB_NAME", "outer")
    script = write_script("full.py", FULL_SCRIPT)
    cwd, path = os.getcwd(), list(sys.path)
    job = Job.create(CPU, script, hyperparameters={"steps": 2}, in_process=True, job_name="inproc")
    assert job.state() == "COMPLETED"
    assert job.result()["name"] == "inproc" and job.result()["steps"] == 2
    assert job.metrics()["loss"] == [1.0, 0.5]
    assert os.environ["AMZN_BRAKET_JOB_NAME"] == "outer" and os.getcwd() == cwd and sys.path == path
    failing = Job.create(CPU, write_script("bad.py", "raise KeyError('nope')\n"), in_process=True)
    assert failing.state() == "FAILED" and "KeyError" in failing.describe()["failure_reason"]


def test_get_unknown_job_names_recent_ones():
    from qhybrid.errors import JobNotFoundError

    with pytest.raises(JobNotFoundError, match="no job named 'ghost'"):
        Job.get("ghost")


def test_delete_removes_row_and_folder(write_script):
    job = Job.create(CPU, write_script("full.py", FULL_SCRIPT), in_process=True)
    job.delete()
    assert not store.job_dir(job.name).exists() and Job.list() == []


@pytest.mark.cuda
def test_gpu_instance_sees_the_gpu(write_script):
    script = write_script("gpu.py", """
        import os, torch
        from qhybrid.jobs import save_job_result
        save_job_result({"cuda": torch.cuda.is_available(), "visible": os.environ["CUDA_VISIBLE_DEVICES"]})
    """)
    job = Job.create(CPU, script, instance_config=InstanceConfig(instanceType="ml.p3.2xlarge")).wait(timeout=60)
    assert job.result() == {"cuda": True, "visible": "0"}


def test_cpu_instance_hides_gpus(write_script):
    script = write_script("nogpu.py", """
        import os
        from qhybrid.jobs import save_job_result
        save_job_result({"visible": os.environ["CUDA_VISIBLE_DEVICES"]})
    """)
    assert Job.create(CPU, script, in_process=True).result() == {"visible": ""}


def test_supervisor_that_cannot_start_fails_the_job(write_script, tmp_path, monkeypatch):
    fake = tmp_path / "fake-python"
    fake.write_text("#!/bin/sh\necho 'ImportError: no supervisor here'\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(fake))
    job = Job.create(CPU, write_script("full.py", FULL_SCRIPT))
    wait_for(lambda: job.state() == "FAILED", timeout=10)
    assert "ImportError: no supervisor here" in job.describe()["failure_reason"]
