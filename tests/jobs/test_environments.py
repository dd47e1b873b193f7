"""Per-job dependency environments: requirements.txt in the source (or @hybrid_job(dependencies=...))
installed in a cached virtual environment before the script starts; pip's message on failure."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from qhybrid import Job, hybrid_job
from qhybrid.jobs import environments

from jobkit import CPU, make_wheel


def _package(tmp_path: Path, requirements: str) -> Path:
    pkg = tmp_path / "needsdeps"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "requirements.txt").write_text(requirements)
    (pkg / "main.py").write_text(
        "import sys, qhtinypkg\nfrom pathlib import Path\nfrom qhybrid.jobs import save_job_result, results_dir\n"
        "(results_dir() / 'ran').write_text('yes')\n"
        "save_job_result({'version': qhtinypkg.VERSION, 'prefix': sys.prefix})\n")
    return pkg


def test_requirements_installed_in_a_cached_environment(tmp_path, home):
    wheels = make_wheel(tmp_path / "wheels").parent
    pkg = _package(tmp_path, f"--no-index\n--find-links {wheels}\nqhtinypkg==1.0  # pinned\n")
    first = Job.create(CPU, pkg, entry_point="needsdeps.main").wait(timeout=300)
    assert first.state() == "COMPLETED", first.describe()["failure_reason"]
    env = first.describe()["environment"]
    assert env is not None and Path(env).parent == home / "envs"
    assert first.result() == {"version": "1.0", "prefix": env}
    assert "qhybrid: building environment" in first.logs()
    second = Job.create(CPU, pkg, entry_point="needsdeps.main").wait(timeout=300)
    assert second.describe()["environment"] == env and f"qhybrid: using environment {env}" in second.logs()
    shown = subprocess.run([sys.executable, "-m", "qhybrid", "jobs", "show", second.name],
                           capture_output=True, text=True, timeout=60).stdout
    assert any(line.split() == ["dependencies", env] for line in shown.splitlines()), shown
    import importlib.util

    assert importlib.util.find_spec("qhtinypkg") is None  # the caller's interpreter was left alone


def test_failed_install_fails_before_the_script_with_pips_message(tmp_path):
    pkg = _package(tmp_path, "--no-index\nqhybrid-no-such-package==9.9\n")
    job = Job.create(CPU, pkg, entry_point="needsdeps.main").wait(timeout=300)
    reason = job.describe()["failure_reason"]
    assert job.state() == "FAILED"
    assert reason.startswith("installing the job's requirements failed: pip install failed: ERROR:")
    assert "qhybrid-no-such-package==9.9" in reason
    assert not (job.folder / "results" / "ran").exists()


def test_hybrid_job_dependencies_list(tmp_path):
    wheels = make_wheel(tmp_path / "wheels").parent

    @hybrid_job(device=CPU, dependencies=["--no-index", f"--find-links {wheels}", "qhtinypkg==1.0"])
    def uses_dep():
        import qhtinypkg

        return {"version": qhtinypkg.VERSION}

    job = uses_dep().wait(timeout=300)
    assert job.result() == {"version": "1.0"}, job.describe()["failure_reason"]
    assert job.spec().extra["environment"]["requirements"][-1] == "qhtinypkg==1.0"


def test_requirement_lines_and_key():
    assert environments.key(["a==1"]) == environments.key(["a==1"]) != environments.key(["a==2"])


def test_unreadable_requirements_refused(tmp_path, home):
    from qhybrid.errors import SpecError

    from jobkit import nothing_written

    pkg = _package(tmp_path, "")
    (pkg / "requirements.txt").write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(SpecError, match="cannot read requirements file"):
        Job.create(CPU, pkg, entry_point="needsdeps.main")
    assert nothing_written(home)


def test_in_process_jobs_say_they_use_the_callers_interpreter(tmp_path):
    pkg = tmp_path / "inproc"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "requirements.txt").write_text("cloudpickle\n")
    (pkg / "main.py").write_text("from qhybrid.jobs import save_job_result\nsave_job_result({'ok': 1})\n")
    job = Job.create(CPU, pkg, entry_point="inproc.main", in_process=True)
    assert job.result() == {"ok": 1} and job.describe()["environment"] is None
    assert "requirements.txt not installed: in-process jobs use the caller's interpreter" in job.logs()


# -- the environment is a phase of the job: inside its limits, ended by cancel (issue 23) ---------------
@pytest.fixture
def silent_index():
    """A local 'package index' that accepts connections and never answers."""
    import socket

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/simple"
    sock.close()


def _pips(home: Path) -> list[int]:
    """Pids of pip processes building an environment under ``home``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if entry.name.isdigit() and "pip install" in cmd and str(home / "envs") in cmd:
            found.append(int(entry.name))
    return found


def _hanging(tmp_path, index) -> Path:
    return _package(tmp_path, f"--index-url {index}\nqhybrid-never-answered==1.0\n")


def test_installing_counts_against_max_runtime(tmp_path, home, silent_index):
    from jobkit import wait_for

    job = Job.create(CPU, _hanging(tmp_path, silent_index), entry_point="needsdeps.main", max_runtime=3)
    wait_for(lambda: job._row()["phase"] == "installing requirements", timeout=30)
    assert job.state() == "RUNNING"
    job.wait(timeout=40)
    info = job.describe()
    assert job.state() == "FAILED", info
    assert info["failure_reason"] == "max_runtime of 3 s exceeded while installing the job's requirements"
    assert info["billed_seconds"] >= 3 and job._row()["phase"] is None
    wait_for(lambda: not _pips(home), timeout=10)


def test_cancel_ends_the_environment_build(tmp_path, home, silent_index):
    from jobkit import gone, wait_for

    job = Job.create(CPU, _hanging(tmp_path, silent_index), entry_point="needsdeps.main")
    wait_for(lambda: _pips(home), timeout=60)
    shown = subprocess.run([sys.executable, "-m", "qhybrid", "jobs", "list"], capture_output=True, text=True,
                           timeout=60).stdout
    assert "INSTALLING" in shown, shown
    supervisor = job._row()["supervisor_pid"]
    assert job.cancel() == "CANCELLED"
    assert "while installing the job's requirements" in job.describe()["failure_reason"]
    wait_for(lambda: not _pips(home) and gone(supervisor), timeout=10)
