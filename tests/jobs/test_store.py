"""The SQLite index and job folders."""
from __future__ import annotations

import shutil
import stat
import threading
import time

import pytest
from jobkit import CPU

from qhybrid import Job
from qhybrid.errors import JobNotFoundError, SpecError, StoreError
from qhybrid.jobs import store
from qhybrid.jobs.spec import JobSpec


def _spec(name: str) -> JobSpec:
    return JobSpec(name=name, device="local:qhybrid/qhybrid.cpu", source="/x.py", entry_point="x",
                   created=time.time())


def test_create_get_transition_delete():
    folder = store.create(_spec("a"), lambda tmp: (tmp / "source" / "x.py").write_text("pass"))
    assert (folder / "spec.json").exists() and (folder / "source" / "x.py").exists()
    assert store.get("a")["state"] == "QUEUED"
    assert store.transition("a", "RUNNING", from_states=("QUEUED",), started=1.0)
    assert not store.transition("a", "RUNNING", from_states=("QUEUED",))
    assert store.transition("a", "COMPLETED")
    row = store.get("a")
    assert row["state"] == "COMPLETED" and row["ended"] >= row["started"]
    assert not store.transition("a", "FAILED")  # terminal states stay
    store.delete("a")
    with pytest.raises(JobNotFoundError):
        store.get("a")
    assert not folder.exists()


def test_failed_populate_leaves_nothing(_isolated_home):
    def boom(tmp):
        raise OSError("disk full")

    with pytest.raises(OSError):
        store.create(_spec("b"), boom)
    assert store.rows() == [] and list((_isolated_home / "jobs").iterdir()) == []


def test_concurrent_inserts_of_one_name_admit_one():
    outcomes = []

    def attempt():
        try:
            store.insert(_spec("same"))
            outcomes.append("ok")
        except SpecError:
            outcomes.append("taken")

    threads = [threading.Thread(target=attempt) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["ok"] + ["taken"] * 7


def test_rows_filters_by_state():
    store.insert(_spec("q"))
    assert [r["name"] for r in store.rows("QUEUED")] == ["q"]
    with pytest.raises(SpecError, match="state 'DONE'"):
        store.rows("DONE")


# -- private by default -------------------------------------------------------------------------------
def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_store_and_job_folders_are_private(write_script, home, tmp_path):
    data = tmp_path / "data.txt"
    data.write_text("1")
    data.chmod(0o644)
    script = write_script("p.py", "from qhybrid.jobs import save_job_result\nsave_job_result({'a': 1})\n")
    script.chmod(0o644)
    job = Job.create(CPU, script, hyperparameters={"token": "secret"}, input_data=data)
    job.wait(timeout=30)
    assert _mode(home / "jobs") == 0o700 and _mode(job.folder) == 0o700
    for path in job.folder.rglob("*"):
        assert _mode(path) == (0o700 if path.is_dir() else 0o600), path
    assert _mode(home / "index.db") == 0o600


def test_a_new_store_is_created_private(tmp_path, monkeypatch):
    monkeypatch.setenv("QHYBRID_HOME", str(tmp_path / "new" / "home"))
    store.insert(_spec("p1"))
    assert _mode(tmp_path / "new" / "home") == 0o700


# -- QHYBRID_HOME ----------------------------------------------------------------------------------
def test_relative_home_is_one_clear_line(monkeypatch):
    monkeypatch.setenv("QHYBRID_HOME", "rel/home")
    with pytest.raises(StoreError, match="QHYBRID_HOME='rel/home' is a relative path"):
        Job.list()


def test_home_that_is_a_file_is_one_clear_line(tmp_path, monkeypatch):
    (tmp_path / "f").write_text("")
    monkeypatch.setenv("QHYBRID_HOME", str(tmp_path / "f"))
    with pytest.raises(StoreError, match="is a file, not a folder"):
        store.insert(_spec("x"))


def test_unwritable_home_is_one_clear_line(tmp_path, monkeypatch):
    monkeypatch.setenv("QHYBRID_HOME", "/proc/qhybrid-home")  # a filesystem nobody may create folders in
    with pytest.raises(StoreError, match="cannot be created") as err:
        store.insert(_spec("x"))
    assert isinstance(err.value, OSError) and "\n" not in str(err.value)


def test_read_only_commands_never_create_a_store(tmp_path, monkeypatch):
    home = tmp_path / "absent"
    monkeypatch.setenv("QHYBRID_HOME", str(home))
    assert Job.list() == [] and store.rows() == []
    with pytest.raises(JobNotFoundError, match="no jobs yet"):
        Job.get("nope")
    assert not home.exists()


# -- one damaged job never hides the others -------------------------------------------------------
def _two_jobs(write_script):
    script = write_script("ok.py", "from qhybrid.jobs import save_job_result\nsave_job_result({'a': 1})\n")
    return [Job.create(CPU, script, job_name=n, in_process=True) for n in ("good", "bad")]


def test_missing_folder_is_listed_as_damaged(write_script):
    good, bad = _two_jobs(write_script)
    shutil.rmtree(bad.folder)
    info = {j.name: j.describe() for j in Job.list()}
    assert info["good"]["damaged"] is None and good.result() == {"a": 1}
    assert "its folder is missing" in info["bad"]["damaged"] and info["bad"]["state"] == "COMPLETED"


def test_corrupt_spec_is_listed_as_damaged(write_script):
    good, bad = _two_jobs(write_script)
    (bad.folder / "spec.json").write_text("{not json")
    info = {j.name: j.describe() for j in Job.list()}
    assert "spec.json is unreadable" in info["bad"]["damaged"] and info["good"]["damaged"] is None


# -- a paused command holds no one (issue 23) -------------------------------------------------------
def _qhybrid(*argv, timeout=30, **env):
    import os
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "qhybrid", *argv], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **env})


def _paused(code: str):
    """A Python process that runs ``code`` and then stops itself (SIGSTOP), as Ctrl-Z would."""
    import os
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", code + "\nimport os, signal\nos.kill(os.getpid(), signal.SIGSTOP)\n"])
    wait_stopped = time.monotonic() + 30
    while time.monotonic() < wait_stopped:
        with open(f"/proc/{proc.pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "T":
                return proc
        time.sleep(0.02)
    proc.kill()
    raise AssertionError("the helper never stopped")


def _resume_and_end(proc):
    import signal

    proc.send_signal(signal.SIGCONT)
    proc.kill()
    proc.wait()


def _sleeper(write_script, name):
    return Job.create(CPU, write_script(f"{name}.py", "import time\ntime.sleep(600)\n"), job_name=name)


@pytest.mark.slow  # the scenario; it passed on main too (a stop lands between looks), the two below do not
def test_a_paused_jobs_wait_holds_up_no_cancel_or_rm(write_script):
    _sleeper(write_script, "watched")
    other = _sleeper(write_script, "other")
    import subprocess
    import sys

    waiter = subprocess.Popen([sys.executable, "-m", "qhybrid", "jobs", "wait", "watched"])
    time.sleep(2.0)  # it is polling now
    import signal

    waiter.send_signal(signal.SIGSTOP)
    try:
        t0 = time.monotonic()
        cancel = _qhybrid("jobs", "cancel", other.name)
        rm = _qhybrid("jobs", "rm", other.name)
        assert cancel.returncode == 0 and rm.returncode == 0, (cancel.stderr, rm.stderr)
        assert time.monotonic() - t0 < 20
    finally:
        _resume_and_end(waiter)
        Job.get("watched").cancel()


def test_a_paused_holder_of_the_index_lock_stalls_no_command(write_script):
    job = Job.create(CPU, write_script("ok.py", "print(1)\n"), in_process=True)
    holder = _paused("from qhybrid.jobs import recovery, store\n"
                     "ctx = recovery.index_lock(store.home() / 'index.db'); ctx.__enter__()")
    try:
        listed = _qhybrid("jobs", "list", timeout=20)
        assert listed.returncode == 0 and job.name in listed.stdout, listed.stderr
        removed = _qhybrid("jobs", "rm", job.name, timeout=20)
        assert removed.returncode == 0, removed.stderr
    finally:
        _resume_and_end(holder)


def test_a_paused_writer_ends_a_waiting_command_in_one_line_naming_the_index(write_script):
    job = Job.create(CPU, write_script("ok.py", "print(1)\n"), in_process=True)
    holder = _paused("import sqlite3\nfrom qhybrid.jobs import store\n"
                     "c = sqlite3.connect(store.home() / 'index.db', isolation_level=None)\n"
                     "c.execute('BEGIN IMMEDIATE'); c.execute(\"UPDATE jobs SET reason='x'\")")
    try:
        t0 = time.monotonic()
        removed = _qhybrid("jobs", "rm", job.name, timeout=25, QHYBRID_LOCK_TIMEOUT="2")
        assert time.monotonic() - t0 < 20
        assert removed.returncode == 1 and removed.stderr.count("\n") == 1, removed.stderr
        assert "index.db stayed locked for 2 s" in removed.stderr
    finally:
        _resume_and_end(holder)
    assert store.get(job.name)["state"] == "COMPLETED" and job.folder.is_dir()  # nothing half-done
