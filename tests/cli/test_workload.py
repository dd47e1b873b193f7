"""The progress display: plain lines when piped, and a live Rich bar in a real terminal (tmux)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from qhybrid.cli.workload import Display, ProgressSpec

SRC = str(Path(__file__).resolve().parents[2] / "src")


def test_plain_lines_one_per_iteration(capsys):
    d = Display("job", ProgressSpec(total=3, show={"Loss": "loss {:.3f}", "epoch_seconds": "{:.2f} s"},
                                    unit="epoch", first=1), live=False)
    d.line("Metrics - timestamp=1; Loss=0.25; iteration_number=2;")
    d.line("[rank 1] Metrics - timestamp=1; Loss=9; iteration_number=2; rank=1;")
    d.line("Metrics - timestamp=1; epoch_seconds=0.125; iteration_number=2;")
    d.line("hello")
    assert capsys.readouterr().err.splitlines() == ["epoch 2/3  loss 0.250  0.12 s", "hello"]


def test_without_a_list_every_logged_metric_shows_per_iteration(capsys):
    d = Display("job", ProgressSpec(first=1), live=False)
    for it in (1, 2):
        d.line(f"Metrics - timestamp=1; loss={3 - it}; iteration_number={it};")
        d.line(f"Metrics - timestamp=1; acc=0.{it}; iteration_number={it};")
    d.line("Metrics - timestamp=2; final=7;")
    d.close()
    assert capsys.readouterr().err.splitlines() == ["iteration 1  loss 2  acc 0.1",
                                                    "iteration 2  loss 1  acc 0.2  final 7"]


def test_a_slow_first_iteration_is_explained(capsys, monkeypatch):
    import qhybrid.cli.workload as workload

    monkeypatch.setattr(workload, "COMPILE_AFTER_S", 0.0)
    d = Display("job", ProgressSpec(show={"energy": "energy {:.1f}"}), live=False)
    d.poll("QUEUED")
    d.poll("RUNNING")
    time.sleep(0.01)
    d.poll("RUNNING")
    d.poll("RUNNING")
    d.line("Metrics - timestamp=1; energy=-3; iteration_number=0;")
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(("compiling kernels for this circuit", "loading the engine and its cached kernels"))
    assert err[1].startswith("first iteration after ") and err[2] == "iteration 1  energy -3.0"


def test_a_long_first_epoch_is_named_as_training_not_loading(capsys, monkeypatch):
    """A 26-wire epoch runs minutes before its metrics: once the job says it started training, the
    wait is named so (it used to read "still loading the engine ... after 76 s"); the marker is not shown."""
    import qhybrid.cli.workload as workload
    from qhybrid.jobs.script import STARTED_MARK

    monkeypatch.setattr(workload, "COMPILE_AFTER_S", 0.0)
    monkeypatch.setattr(workload, "STILL_EVERY_S", 0.0)
    d = Display("job", ProgressSpec(total=1, show={"Loss": "loss {:.3f}"}, unit="epoch", first=1), live=False)
    monkeypatch.setattr(d, "_kernel_files", lambda: 5)  # a warm kernel cache: nothing compiles
    d.poll("RUNNING")
    time.sleep(0.01)
    d.poll("RUNNING")
    d.line(f"{STARTED_MARK}training epoch 1 of 1 (12 samples; metrics at its end)")
    time.sleep(0.01)
    d.poll("RUNNING")
    time.sleep(0.01)
    d.poll("RUNNING")
    d.line("Metrics - timestamp=1; Loss=0.25; iteration_number=1;")
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "loading the engine and its cached kernels ..."
    assert err[1] == "training epoch 1 of 1 (12 samples; metrics at its end) ..."
    assert err[2].startswith("still training epoch 1 of 1 (12 samples; metrics at its end) after ")
    assert not any(STARTED_MARK in line for line in err)
    assert err[-2].startswith("first epoch after ") and err[-1] == "epoch 1/1  loss 0.250"


def _capture(session: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_live_progress_in_a_real_terminal(tmp_path):
    """What a person sees in an 80-column terminal: a bar with M/N, ETA and the energy, then the answer."""
    session = f"qh-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "PYTHONPATH": SRC, "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    env.pop("COLUMNS", None)
    cmd = (f"{sys.executable} -m qhybrid qaoa --nodes 18 --edges 24 --iterations 150 --starts 2; "
           f"echo EXIT=$?; sleep 60")
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "30", "-c", str(tmp_path),
                    *[f"-e{k}={v}" for k, v in env.items() if k in ("PYTHONPATH", "QHYBRID_HOME", "TERM",
                                                                     "NUMBA_CACHE_DIR", "OMP_NUM_THREADS")],
                    cmd], check=True)
    seen_bar, screen = None, ""
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            screen = _capture(session)
            bars = [line for line in screen.splitlines() if "ETA" in line and "/150" in line]
            if bars and "energy" in bars[0]:
                seen_bar = bars[0]
            if "EXIT=" in screen:
                break
            time.sleep(0.1)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    assert "EXIT=0" in screen, screen
    assert seen_bar is not None, screen
    assert len(seen_bar.rstrip()) <= 80 and "running" in seen_bar and "p=2" in seen_bar
    lines = screen.splitlines()
    assert any(line.startswith("cut ") and "edges — optimum" in line for line in lines)
    assert not any("ETA" in line for line in lines)  # the bar is gone once the job ends
    assert all(len(line) <= 80 for line in lines)
