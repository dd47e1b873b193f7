"""Piped, the CLI is plain and no wider than the terminal it would have had: ``$COLUMNS`` when
set, else 80 (``output.width``); ``--json`` is exempt (one document, as long as its values).

Lines allowed past the width, and only these (``ALLOWED``):
- a line that is one word after its indent: a path or a URL (with its token) cannot be wrapped;
- ``qhybrid: error: ...``: a user error stays one line (the CLI's contract), however long the
  value it names; exactly one such line.
A job's own log (``jobs logs``) is printed verbatim and is not checked here.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from qhybrid.cli import app

ALLOWED = {
    "one word (a path, a URL)": re.compile(r"^\s*\S+$"),
    "a user error, one line by contract": re.compile(r"^qhybrid: error: "),
}
QAOA, RUN = "piped-qaoa", "piped-run"
SCRIPT = """
    from qhybrid.jobs import log_metric, save_job_result
    for i in range(3):
        log_metric("loss", 3 - i, iteration_number=i)
    save_job_result({"x": 1})
"""


def too_wide(text: str, width: int) -> list[str]:
    """The lines of ``text`` wider than ``width`` that no rule of ``ALLOWED`` lets through."""
    return [line for line in text.splitlines()
            if len(line) > width and not any(rule.search(line) for rule in ALLOWED.values())]


def _piped(argv: list[str], *, home: Path, columns: int | None) -> subprocess.CompletedProcess:
    """``qhybrid ARGV`` as its own process, stdin, stdout and stderr all pipes (no terminal at all)."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR", "LINES")}
    env["QHYBRID_HOME"] = str(home)
    if columns is not None:
        env["COLUMNS"] = str(columns)
    return subprocess.run([sys.executable, "-m", "qhybrid", *argv], env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def piped_jobs(tmp_path_factory):
    """A home with two finished jobs, each submitted by a real ``qhybrid`` piped: a small QAOA with
    COLUMNS unset (80) and a tiny script with COLUMNS=120; their output by job name."""
    home = tmp_path_factory.mktemp("piped-home")
    script = tmp_path_factory.mktemp("piped-script") / "tiny.py"
    script.write_text(textwrap.dedent(SCRIPT))
    runs = {QAOA: (["qaoa", "--nodes", "5", "--edges", "6", "--iterations", "2", "--device", "qhybrid.cpu",
                    "--name", QAOA], None),
            RUN: (["run", str(script), "--name", RUN], 120)}
    outputs = {}
    for name, (argv, columns) in runs.items():
        proc = _piped(argv, home=home, columns=columns)
        assert proc.returncode == 0, proc.stderr[-3000:]
        outputs[name] = (proc, columns or 80)
    _calibrated(home)
    return home, outputs


def _calibrated(home: Path) -> None:
    """The estimate tests' fixed calibration in ``home``, so that ``estimate`` measures nothing."""
    from dataclasses import asdict

    path = Path(__file__).parents[1] / "estimate" / "conftest.py"
    spec = importlib.util.spec_from_file_location("_estimate_fixtures", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cal = module.fixed_calibration()
    (home / "calibration.json").write_text(json.dumps({cal.key: asdict(cal)}), encoding="utf-8")


@pytest.mark.parametrize("name", [QAOA, RUN])
def test_a_submitted_jobs_output_fits_piped_with_its_cost_line_wrapped(piped_jobs, name):
    _home, outputs = piped_jobs
    proc, width = outputs[name]
    for text in (proc.stdout, proc.stderr):
        assert "\x1b" not in text
        assert too_wide(text, width) == [], f"COLUMNS={width}"
    err = proc.stderr.splitlines()
    start = next(i for i, line in enumerate(err) if line.startswith("cost: $"))
    cost = " ".join(line.strip() for line in err[start:])  # the same words, only wrapped
    assert "same run on ml.m5.large: $" in cost and f"qhybrid jobs show {name} --json)" in cost
    assert all(line.startswith("      ") for line in err[start + 1:])  # continued under itself
    assert any(line.startswith(f"qhybrid: job {name} running ") for line in err)  # our status lines too


COMMANDS = [
    ("--help",), ("jobs", "--help"),  # run, qaoa and qml --help: test_fit
    ("jobs", "export", "--help"), ("ui", "--help"), ("estimate", "qml", "--help"),
    ("instances",), ("devices",), ("estimate", "qaoa", "--nodes", "8"), ("estimate", "qml", "--epochs", "2"),
    ("jobs", "list"), ("jobs", "show", QAOA), ("jobs", "show", RUN), ("jobs", "compare", QAOA, RUN),
    ("jobs", "metrics", QAOA), ("jobs", "result", RUN),
    ("qaoa", "--nodes", "abc"), ("qaoa", "--iterations", "0"), ("jobs", "show", "no-such-job"),
    ("qaoa", "--device", "no.such.device"),
]


@pytest.mark.parametrize("columns", [None, 120])
def test_every_screen_fits_piped_and_is_plain(piped_jobs, monkeypatch, columns):
    """Each of COMMANDS with no terminal anywhere: no line past the width but those ALLOWED, no
    escape codes; a failing one says so in exactly one line."""
    home, _outputs = piped_jobs
    monkeypatch.setenv("QHYBRID_HOME", str(home))
    monkeypatch.delenv("NO_COLOR")  # plain because piped, not because asked
    if columns is None:
        monkeypatch.delenv("COLUMNS")

        def no_terminal(fd=1):
            raise OSError("not a terminal")

        monkeypatch.setattr(os, "get_terminal_size", no_terminal)  # as piped, whatever runs pytest
    else:
        monkeypatch.setenv("COLUMNS", str(columns))
    width = columns or 80
    wide = {}
    for argv in COMMANDS:
        res = CliRunner().invoke(app, list(argv))
        text = res.stdout + res.stderr
        assert "\x1b" not in text, argv
        if res.exit_code:
            assert sum(line.startswith("qhybrid: error: ") for line in res.stderr.splitlines()) == 1, argv
            assert res.stdout == "", argv
        else:
            assert text.strip(), argv
        if too_wide(text, width):
            wide[" ".join(argv)] = too_wide(text, width)
    assert wide == {}, f"COLUMNS={width}"


def test_too_wide_lets_through_only_what_is_allowed():
    text = "short\n" + "x " * 50 + "\n  /a/very/long/path/" + "p" * 90 + "\nqhybrid: error: " + "e " * 50
    assert too_wide(text, 80) == ["x " * 50]


def test_the_progress_lines_wrap_piped(capsys, monkeypatch):
    """A long wait's ``still compiling ... after N s`` and a script's many metrics: wrapped at
    words to 80 columns piped (the CLI tests' COLUMNS), as on a terminal."""
    import qhybrid.cli.workload as workload
    from qhybrid.cli.workload import Display, ProgressSpec

    for knob in ("COMPILE_AFTER_S", "STILL_EVERY_S", "KERNEL_LOOK_S"):
        monkeypatch.setattr(workload, knob, -1.0)
    files = iter([3, 17, 17, 17])
    monkeypatch.setattr(Display, "_kernel_files", lambda self: next(files))
    d = Display("job", ProgressSpec(), live=False)
    for _ in range(3):
        d.poll("RUNNING")
    d.line("Metrics - timestamp=1; " + "".join(f"metric_number_{k}=0.{k}; " for k in range(8)) + "iteration_number=0;")
    d.close()
    err = capsys.readouterr().err
    assert "still compiling kernels" in err and "metric_number_7 0.7" in err
    assert too_wide(err, 80) == [], err
