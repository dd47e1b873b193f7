"""The supervisor: environment contract, failure text, limits, bills and the end of every process."""
from __future__ import annotations

import errno
import io
import os
import signal

import pytest
from jobkit import CPU, gone, read_pid, wait_for

from qhybrid import InstanceConfig, Job
from qhybrid.jobs import store, supervisor
from qhybrid.jobs.spec import build_spec
from qhybrid.jobs.supervisor import free_port, job_env, traceback_tail


def test_job_env_is_the_braket_contract(write_script, monkeypatch):
    monkeypatch.setenv("RANK", "9")  # inherited coordinates never leak into a job
    spec = build_spec(device="local:qhybrid/qhybrid.cpu", source_module=write_script("s.py", "pass\n"),
                      job_name="envjob", distribution="data_parallel", processes_per_instance=2)
    env = job_env(spec, rank=1, port=12345)
    folder = store.job_dir("envjob")
    assert env["AMZN_BRAKET_DEVICE_ARN"] == "local:qhybrid/qhybrid.cpu"
    assert env["AMZN_BRAKET_HP_FILE"] == str(folder / "hyperparameters.json")
    assert env["AMZN_BRAKET_INPUT_DIR"] == str(folder / "input")
    assert env["AMZN_BRAKET_JOB_RESULTS_DIR"] == str(folder / "results")
    assert env["AMZN_BRAKET_CHECKPOINT_DIR"] == str(folder / "checkpoints")
    assert env["AMZN_BRAKET_JOB_NAME"] == "envjob"
    assert (env["RANK"], env["LOCAL_RANK"], env["WORLD_SIZE"]) == ("1", "1", "2")
    assert (env["MASTER_ADDR"], env["MASTER_PORT"]) == ("127.0.0.1", "12345")
    assert env["OMP_NUM_THREADS"] == env["QHYBRID_TORCH_THREADS"] and int(env["OMP_NUM_THREADS"]) >= 1
    assert env["CUDA_VISIBLE_DEVICES"] == ""  # ml.m5.large has no GPU


def test_traceback_tail_takes_the_last_traceback():
    text = "noise\nTraceback (most recent call last):\n  old\nA: 1\nmore\nTraceback (most recent call last):\n" \
           '  File "x.py", line 1\nValueError: new\n'
    assert traceback_tail(text) == 'Traceback (most recent call last):\n  File "x.py", line 1\nValueError: new'
    assert traceback_tail("a\nb\n") == "a\nb"


def test_free_port():
    assert 0 < free_port() < 65536


def test_job_env_sets_a_passive_omp_wait_policy_unless_set(write_script, monkeypatch):
    spec = build_spec(device="local:qhybrid/qhybrid.cpu", source_module=write_script("s.py", "pass\n"), job_name="omp")
    assert job_env(spec)["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    assert job_env(spec)["OMP_WAIT_POLICY"] == "ACTIVE"
    assert "source" not in job_env(spec).get("PYTHONPATH", "")  # the source is no import path of the runner


# -- no process outlives its job ------------------------------------------------------------------
# The script starts a grandchild that leaves the job's process group (setsid) and ignores SIGTERM,
# writes its pid, then does what ``HOW`` says.
ORPHAN = """
    import os, subprocess, sys, time
    from qhybrid.jobs import results_dir
    how = {how!r}
    child = subprocess.Popen([sys.executable, "-c",
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"],
        start_new_session=True)
    (results_dir() / "pid").write_text(str(child.pid))
    if how == "exit":
        sys.exit(0)
    if how == "fail":
        raise RuntimeError("boom")
    time.sleep(600)
"""


def _priced(tmp_path, monkeypatch):
    prices = tmp_path / "prices.toml"
    prices.write_text('[prices]\n"ml.c5.xlarge" = 60.0\n')  # 1 USD per second
    monkeypatch.setenv("QHYBRID_PRICES", str(prices))


@pytest.mark.parametrize("how, expect", [
    ("exit", "COMPLETED"), ("fail", "FAILED"), ("cancel", "CANCELLED"), ("timeout", "FAILED"),
    ("budget", "FAILED"), ("supervisor-death", "FAILED"),
])
def test_no_process_outlives_its_job(write_script, tmp_path, monkeypatch, how, expect):
    _priced(tmp_path, monkeypatch)
    kwargs = {"max_runtime": 1.5} if how == "timeout" else {}
    if how == "budget":
        kwargs = {"max_cost": 2.0, "instance_config": InstanceConfig(instanceType="ml.c5.xlarge")}
    job = Job.create(CPU, write_script("orphan.py", ORPHAN.format(how=how)), **kwargs)
    pid = read_pid(store.job_dir(job.name) / "results" / "pid")
    if how == "cancel":
        job.cancel()
    if how == "supervisor-death":
        wait_for(lambda: (store.job_dir(job.name) / "descendants.json").exists()
                 and str(pid) in (store.job_dir(job.name) / "descendants.json").read_text())
        os.kill(store.get(job.name)["supervisor_pid"], signal.SIGKILL)
    job.wait(timeout=30)
    assert job.state() == expect
    wait_for(lambda: gone(pid), timeout=10)


GRANDCHILDREN = """
    import subprocess, sys, time
    from qhybrid.jobs import results_dir
    sleeper = [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"]
    same_group = subprocess.Popen(sleeper)
    own_session = subprocess.Popen(sleeper, start_new_session=True)
    (results_dir() / "pids").write_text(f"{same_group.pid} {own_session.pid}")
    time.sleep(600)
"""


def test_kill_9_of_the_supervisor_ends_the_grandchildren_with_no_later_command(write_script):
    job = Job.create(CPU, write_script("grand.py", GRANDCHILDREN))
    folder = store.job_dir(job.name)
    pids = wait_for(lambda: (folder / "results" / "pids").exists() and (folder / "results" / "pids").read_text())
    pids = [int(p) for p in pids.split()]
    wait_for(lambda: all(str(p) in (folder / "descendants.json").read_text() for p in pids)
             if (folder / "descendants.json").exists() else False)
    os.kill(store.get(job.name)["supervisor_pid"], signal.SIGKILL)
    wait_for(lambda: all(gone(p) for p in pids), timeout=10)  # no qhybrid command ran meanwhile
    job.wait(timeout=30)
    assert job.state() == "FAILED"


class _FullDisk(io.StringIO):
    """A log file on a full disk: every write fails with ENOSPC."""

    def write(self, text):
        raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize("which", ["metrics.jsonl", "rank-0.log"])
def test_a_job_whose_output_cannot_be_written_fails_with_the_reason(write_script, monkeypatch, which):
    opened = supervisor.Supervisor._open
    monkeypatch.setattr(supervisor.Supervisor, "_open",
                        lambda self, path: _FullDisk() if path.name == which else opened(self, path))
    script = write_script("talk.py", "import time\nprint('Metrics - loss=1;', flush=True)\ntime.sleep(600)\n")
    job = Job.create(CPU, script, launch="fork")  # the forked supervisor carries the full disk
    job.wait(timeout=30)
    row = store.get(job.name)
    assert row["state"] == "FAILED" and "No space left on device" in row["reason"], row["reason"]
    assert [j.name for j in Job.list()] == [job.name]  # the store stays readable


def test_max_cost_stops_before_the_bill_passes_the_budget(write_script, tmp_path, monkeypatch):
    _priced(tmp_path, monkeypatch)
    job = Job.create(CPU, write_script("sleep.py", "import time\ntime.sleep(600)\n"), max_cost=2.5,
                     instance_config=InstanceConfig(instanceType="ml.c5.xlarge"))
    info = job.wait(timeout=30).describe()
    assert info["state"] == "FAILED" and "max_cost" in info["failure_reason"]
    assert info["estimated_cost_usd"] <= 2.5 and info["billed_seconds"] <= 2


def test_edited_prices_during_a_run_keep_the_job_and_its_price(write_script, tmp_path, monkeypatch):
    _priced(tmp_path, monkeypatch)
    job = Job.create(CPU, write_script("s.py", "import time\ntime.sleep(1.0)\n"),
                     instance_config=InstanceConfig(instanceType="ml.c5.xlarge"))
    (tmp_path / "prices.toml").write_text('[prices]\n"ml.c5.xlarge" = "not a number"\n')
    info = job.wait(timeout=30).describe()
    assert info["state"] == "COMPLETED" and info["price_usd_per_minute"] == 60.0
    assert info["estimated_cost_usd"] == info["billed_seconds"] * 1.0


def test_single_instance_rendezvous_listens_on_loopback_only(write_script):
    script = write_script("ddp.py", """
        import os
        import torch.distributed as dist
        from qhybrid.jobs import distributed, save_job_result
        info = distributed()
        port = int(os.environ["MASTER_PORT"])
        listening = []
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            for line in open(table).read().splitlines()[1:]:
                local, state = line.split()[1], line.split()[3]
                if state == "0A":
                    listening.append(local)
        dist.barrier()
        if info["rank"] == 0:
            save_job_result({"listening": listening, "port": port})
    """)
    job = Job.create(CPU, script, distribution="data_parallel", processes_per_instance=2)
    out = job.wait(timeout=90).result()
    mine = [a for a in out["listening"] if int(a.rsplit(":", 1)[1], 16) == out["port"]]
    assert mine == [f"0100007F:{out['port']:04X}"]  # 127.0.0.1 only, no [::] nor 0.0.0.0


def test_a_source_file_named_json_py_does_not_break_the_runner(write_script):
    script = write_script("json.py", """
        import json, sys
        from qhybrid.jobs import save_job_result
        save_job_result({"ok": 1, "name": __name__})
    """)
    job = Job.create(CPU, script)
    assert job.wait(timeout=30).result() == {"ok": 1, "name": "__main__"}, job.logs()


@pytest.mark.parametrize("version", [(3, 10), (3, 11)])
def test_runner_command_keeps_the_source_folder_behind_the_standard_library(tmp_path, monkeypatch, version):
    import subprocess

    from qhybrid.jobs import supervisor

    (tmp_path / "json.py").write_text("raise SystemExit('the runner imported the job folder json.py')\n")
    (tmp_path / "job.py").write_text("import json; print('ran', json.dumps([1]))\n")
    with monkeypatch.context() as m:
        m.setattr(supervisor.sys, "version_info", version)
        argv = supervisor.runner_argv()
    assert ("-P" in argv) == (version >= (3, 11))
    out = subprocess.run([*argv, str(tmp_path), "job"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stdout.strip()) == (0, "ran [1]"), out.stderr
