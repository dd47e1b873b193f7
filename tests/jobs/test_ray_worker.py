"""RankRunner (the actor class) run as a plain object: workspace, env, output lines, kill, outputs."""
from __future__ import annotations

import io
import os
import sys
import tempfile
import tarfile
import time
from pathlib import Path

import pytest

from qhybrid.jobs.backends.ray.worker import RankRunner, pack, unpack


def _bundle(tmp_path, body: str) -> bytes:
    root = tmp_path / "job"
    (root / "source").mkdir(parents=True)
    (root / "source" / "s.py").write_text(body)
    (root / "checkpoints").mkdir()
    (root / "checkpoints" / "old.json").write_text("{}")
    (root / "hyperparameters.json").write_text('{"a": "1"}')
    return pack(root, ["source", "input", "checkpoints", "hyperparameters.json"])


def _run_to_end(runner: RankRunner, timeout: float = 30.0):
    lines, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        new, code = runner.poll()
        lines += new
        if code is not None:
            return lines, code
        time.sleep(0.05)
    raise AssertionError(f"still running; lines so far: {lines}")


SCRIPT = """
import os, sys, pathlib
print("cwd", os.path.basename(os.getcwd()), "rank", os.environ["RANK"])
print("hp", open(os.environ["AMZN_BRAKET_HP_FILE"]).read())
print("oops", file=sys.stderr)
pathlib.Path(os.environ["AMZN_BRAKET_JOB_RESULTS_DIR"], "results.json").write_text("{}")
pathlib.Path(os.environ["AMZN_BRAKET_CHECKPOINT_DIR"], "new.json").write_text("{}")
sys.exit(3)
"""


def test_runs_in_its_workspace_streams_lines_and_returns_outputs(tmp_path):
    runner = RankRunner(subreaper=False)
    env = {"RANK": "1", "AMZN_BRAKET_HP_FILE": "{workdir}/hyperparameters.json",
           "AMZN_BRAKET_JOB_RESULTS_DIR": "{workdir}/results", "AMZN_BRAKET_CHECKPOINT_DIR": "{workdir}/checkpoints"}
    workdir = Path(runner.start(_bundle(tmp_path, SCRIPT), env=env, argv=["{python}", "s.py"]))
    lines, code = _run_to_end(runner)
    assert code == 3
    assert ("stdout", "cwd source rank 1") in lines and ("stdout", 'hp {"a": "1"}') in lines
    assert ("stdout", "oops") in lines  # stderr merged in order, as locally
    unpack(runner.new_outputs(), tmp_path / "synced")  # only what the rank wrote, not what it was given
    assert sorted(p.name for p in (tmp_path / "synced").rglob("*.json")) == ["new.json", "results.json"]
    assert runner.new_outputs() is None
    unpack(runner.outputs(), tmp_path / "out")
    assert (tmp_path / "out" / "results" / "results.json").exists()
    assert (tmp_path / "out" / "checkpoints" / "old.json").exists()
    runner.cleanup()
    assert not workdir.exists()


def test_workspaces_of_dead_actors_are_swept(tmp_path, monkeypatch):
    import subprocess

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f"qhybrid-rank-{int(dead.stdout)}-abc"
    live = tmp_path / f"qhybrid-rank-{os.getpid()}-def"
    stale.mkdir()
    live.mkdir()
    runner = RankRunner(subreaper=False)
    workdir = Path(runner.start(_bundle(tmp_path, "pass\n"), env={}, argv=[sys.executable, "s.py"]))
    _run_to_end(runner)
    assert not stale.exists() and live.exists() and workdir.parent == tmp_path
    runner.cleanup()


def test_kill_ends_the_process_group(tmp_path):
    runner = RankRunner(subreaper=False)
    body = ("import subprocess, sys, time\n"
            "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            "print('child', child.pid, flush=True)\ntime.sleep(60)\n")
    runner.start(_bundle(tmp_path, body), env={}, argv=[sys.executable, "s.py"])
    deadline, lines = time.monotonic() + 20, []
    while not lines and time.monotonic() < deadline:
        lines += runner.poll()[0]
        time.sleep(0.05)
    child = int(lines[0][1].split()[1])
    t0 = time.monotonic()
    assert runner.kill(grace=1.0) is not None
    assert time.monotonic() - t0 < 5
    deadline = time.monotonic() + 5
    while Path(f"/proc/{child}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{child}").exists() or "Z" in Path(f"/proc/{child}/stat").read_text().split(")")[1][:3]
    runner.cleanup()


def test_unpack_refuses_paths_that_escape(tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("../evil.txt")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(Exception):
        unpack(buf.getvalue(), tmp_path / "c")
    assert not (tmp_path / "evil.txt").exists()


ORPHANING = """
import subprocess, sys
g = subprocess.Popen([sys.executable, "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"], start_new_session=True)
print(g.pid, flush=True)
"""

ACTOR = """
import sys, time
from qhybrid.jobs.backends.ray.worker import RankRunner, pack
runner = RankRunner()  # as in a Ray actor process: the subreaper of the rank's tree
runner.start(open(sys.argv[1], "rb").read(), env={}, argv=["{python}", "s.py"])
lines, code = [], None
while code is None:
    new, code = runner.poll()
    lines += new
    time.sleep(0.05)
print(lines[0][1], code, flush=True)
runner.cleanup()
"""


def test_a_process_the_rank_leaves_behind_is_ended(tmp_path):
    import subprocess

    from jobkit import gone

    bundle = tmp_path / "bundle.tar"
    bundle.write_bytes(_bundle(tmp_path, ORPHANING))
    out = subprocess.run([sys.executable, "-c", ACTOR, str(bundle)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    pid, code = map(int, out.stdout.split())
    assert code == 0 and gone(pid)


def test_the_rendezvous_store_listens_on_the_chosen_interface_only():
    runner = RankRunner(subreaper=False)
    port = runner.host_store("127.0.0.1")
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in open(table).read().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                listening.append(local)
    assert listening == [f"0100007F:{port:04X}"]
