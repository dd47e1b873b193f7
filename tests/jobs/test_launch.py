"""A job's supervisor started as a fork of its caller: detached (own session, none of the caller's
file descriptors), the same lifecycle as an exec'd one (results, cancel, no leftover process)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from jobkit import CPU, gone, nothing_written, wait_for

from qhybrid.errors import SpecError
from qhybrid.jobs import launch, store
from qhybrid.submit import Job

GATED = """
    import os, time
    from pathlib import Path
    from qhybrid.jobs import hyperparameters, save_job_result
    gate = Path(hyperparameters()["gate"])
    while not gate.exists():
        time.sleep(0.02)
    save_job_result({"sid": os.getsid(0), "pid": os.getpid()})
"""

CREATE = """
import json, os, sys
from qhybrid.submit import Job
job = Job.create({device!r}, {script!r}, hyperparameters={{"gate": {gate!r}}}, launch="fork")
print(json.dumps({{"name": job.name, "sid": os.getsid(0), "pid": os.getpid()}}), flush=True)
"""


@pytest.fixture
def forked_job(home, write_script, tmp_path):
    """A fork-launched job, created by a short-lived caller process that has already exited; the job
    waits for ``gate`` to exist. Returns (caller's facts, gate path)."""
    script = write_script("gated.py", GATED)
    gate = tmp_path / "gate"
    code = CREATE.format(device=CPU, script=str(script), gate=str(gate))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "QHYBRID_HOME": str(home)})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout), gate


def test_the_caller_returns_while_its_forked_supervisor_runs_the_job(forked_job):
    """capture_output returned: the supervisor kept none of the caller's pipes open, although the
    job is still waiting for its gate."""
    caller, gate = forked_job
    job = Job.get(caller["name"])
    assert job.state() in ("QUEUED", "RUNNING")
    gate.touch()
    result = job.result(timeout=60)
    assert result["sid"] != caller["sid"]  # the job runs in the supervisor's own session
    row = store.get(job.name)
    assert row["supervisor_pid"] != caller["pid"]
    wait_for(lambda: gone(row["supervisor_pid"]))
    log = (job.folder / "logs" / "supervisor.log").read_text()
    assert "Traceback" not in log


def test_a_forked_supervisor_cancels(forked_job):
    caller, _gate = forked_job
    job = Job.get(caller["name"])
    wait_for(lambda: job.state() == "RUNNING")
    assert job.cancel() == "CANCELLED"
    wait_for(lambda: gone(store.get(job.name)["supervisor_pid"]))


def test_forked_from_this_process_and_reaped_here(home, write_script, tmp_path):
    gate = tmp_path / "gate"
    gate.touch()
    job = Job.create(CPU, write_script("gated.py", GATED), hyperparameters={"gate": str(gate)}, launch="fork")
    assert job.result(timeout=60)["pid"] != os.getpid()
    from qhybrid.jobs.liveness import SUPERVISORS

    proc = SUPERVISORS.get(job.name)
    if proc is not None:  # not yet reaped by a look at the job: reap it now, as Job.state would
        assert isinstance(proc, launch.Forked) and proc.wait(timeout=30) == 0


def test_forked_wait_and_poll():
    pid = os.fork()
    if pid == 0:
        os._exit(3)
    proc = launch.Forked(pid)
    assert proc.wait(timeout=30) == 3 and proc.poll() == 3
    pid = os.fork()
    if pid == 0:
        import time

        time.sleep(5)
        os._exit(0)
    proc = launch.Forked(pid)
    assert proc.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(timeout=0.05)
    os.kill(pid, 9)
    assert proc.wait() == -9


def test_an_unknown_launch_mode_is_refused_before_anything_is_written(home, write_script):
    with pytest.raises(SpecError, match="launch='spawn': valid are 'exec', 'fork'"):
        Job.create(CPU, write_script("s.py", "print(1)\n"), launch="spawn")
    assert nothing_written(home)
