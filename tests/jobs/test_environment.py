"""environment.json: what a job ran with, recorded at submission."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from qhybrid.jobs import environment

from qhybrid.submit import Job


def test_collect_has_the_facts(tmp_path):
    src = tmp_path / "repo"
    src.mkdir()
    subprocess.run(["git", "init", "-q", str(src)], check=True)
    (src / "job.py").write_text("print(1)\n")
    subprocess.run(["git", "-C", str(src), "add", "job.py"], check=True)
    subprocess.run(["git", "-C", str(src), "-c", "user.email=a@b", "-c", "user.name=t", "commit", "-qm", "x"],
                   check=True)
    env = environment.collect(source=src / "job.py", argv=["qhybrid", "run", "job.py"])
    for key in ("torch", "pennylane", "pennylane-lightning", "numba", "ray", "qhybrid"):
        assert key in env["packages"]
    assert env["packages"]["qhybrid"] and env["cpu"] and env["cpu_count"] >= 1 and env["host"]
    assert env["python"].startswith("CPython") or env["python"]
    assert len(env["source_git_commit"]) == 40 and env["command_line"] == ["qhybrid", "run", "job.py"]
    (src / "job.py").write_text("print(2)\n")
    assert environment.collect(source=src / "job.py")["source_git_commit"].endswith("-dirty")
    assert environment.git_commit(tmp_path / "not-a-repo") is None


def test_every_job_records_it(tmp_path):
    script = tmp_path / "j.py"
    script.write_text("print('hi')\n")
    job = Job.create("local:qhybrid/qhybrid.cpu", str(script), in_process=True)
    env = environment.read(job.folder)
    assert env is not None and env["source"] == str(script) and env["packages"]["qhybrid"]
    assert environment.read(tmp_path) is None


def test_recording_does_not_import_torch():
    code = ("import sys\nfrom qhybrid.jobs import environment\nenvironment.collect()\n"
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={"PYTHONPATH": str(Path(environment.__file__).parents[2]), "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "False", out.stderr
