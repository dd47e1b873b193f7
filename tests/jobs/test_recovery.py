"""Recovery: an unreadable index rebuilt from the job folders; half-made submissions removed."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from jobkit import CPU, wait_for

from qhybrid import Job
from qhybrid.jobs import store


def _two_jobs(write_script):
    script = write_script("ok.py", "from qhybrid.jobs import save_job_result\nsave_job_result({'a': 1})\n")
    return [Job.create(CPU, script, job_name=n, in_process=True) for n in ("good", "bad")]


@pytest.mark.parametrize("damage", ["garbage", "truncated", "missing"])
def test_unreadable_index_is_rebuilt_from_the_folders(write_script, home, damage):
    _two_jobs(write_script)
    db = home / "index.db"
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    if damage == "garbage":
        db.write_bytes(b"this is not a database" * 100)
    elif damage == "truncated":
        db.write_bytes(db.read_bytes()[:1500])
    else:
        db.unlink()
    store._READY.clear()  # as a new process would
    jobs = {j.name: j for j in Job.list()}
    assert sorted(jobs) == ["bad", "good"]
    assert jobs["good"].state() == "COMPLETED" and jobs["good"].result() == {"a": 1}
    assert jobs["good"].describe()["billed_seconds"] is not None


def test_repair_adds_folders_and_removes_half_made_submissions(write_script, home):
    _two_jobs(write_script)
    store.delete_row("bad")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    half = home / "jobs" / f".tmp-{int(dead.stdout)}-killed-abcd1234"
    (half / "input").mkdir(parents=True)
    done = store.repair()
    assert done["rows_added"] == 1 and done["stale_submissions_removed"] == 1 and not half.exists()
    assert sorted(r["name"] for r in store.rows()) == ["bad", "good"]


def test_submission_killed_while_copying_leaves_nothing(write_script, home, tmp_path):
    big = tmp_path / "big"
    big.mkdir()
    for i in range(400):
        (big / f"f{i}").write_bytes(b"x" * 200_000)
    script = write_script("k.py", "print(1)\n")
    code = (f"from qhybrid import Job; Job.create('local:qhybrid/qhybrid.cpu', {str(script)!r}, "
            f"job_name='killed', input_data={str(big)!r})")
    proc = subprocess.Popen([sys.executable, "-c", code])
    wait_for(lambda: any((home / "jobs").glob(".tmp-*")) if (home / "jobs").exists() else False, step=0.005)
    proc.kill()
    proc.wait()
    assert any((home / "jobs").glob(".tmp-*"))  # killed mid-copy: its temp folder is still there
    listed = subprocess.run([sys.executable, "-m", "qhybrid", "jobs", "list"], capture_output=True, text=True,
                            timeout=60)  # the next command, whichever, cleans up (a read-only one here)
    assert listed.returncode == 0, listed.stderr
    assert list((home / "jobs").iterdir()) == []
    assert store.rows() == []
    Job.create(CPU, script, job_name="next", in_process=True)
    assert [p.name for p in (home / "jobs").iterdir()] == ["next"]


def test_processes_meeting_a_garbage_index_at_once_rebuild_it_once(write_script, home):
    _two_jobs(write_script)
    for suffix in ("-wal", "-shm"):
        Path(f"{home / 'index.db'}{suffix}").unlink(missing_ok=True)
    (home / "index.db").write_bytes(b"garbage" * 500)
    code = "from qhybrid import Job; print(sorted(j.name for j in Job.list()))"
    procs_ = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True) for _ in range(4)]
    outs = [p.communicate(timeout=60)[0].strip() for p in procs_]
    assert outs == ["['bad', 'good']"] * 4
    assert len(list(home.glob("index.db.damaged-*"))) == 1
