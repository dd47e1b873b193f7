"""Shared by the CLI tests: Typer's runner on the real app, a tiny job script, no leftover jobs."""
from __future__ import annotations

import textwrap

import pytest
from typer.testing import CliRunner

from qhybrid.cli import app

SCRIPT = """
    from qhybrid.jobs import hyperparameters, log_metric, save_job_result
    hp = hyperparameters()
    for i in range(3):
        log_metric("loss", 3 - i, iteration_number=i)
        log_metric("iteration_seconds", 0.5 if i == 0 else 0.01, iteration_number=i)
    save_job_result({"x": hp.get("x")})
"""


@pytest.fixture(autouse=True)
def _no_leftover_jobs(_isolated_home, monkeypatch):
    """Plain output (as when piped) and, after each test, no job still running."""
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "80")
    yield
    if (_isolated_home / "index.db").exists():
        from qhybrid.submit import Job

        for job in Job.list():
            if job.folder.is_dir() and job.state() in ("QUEUED", "RUNNING"):
                job.cancel(timeout=5)


@pytest.fixture
def cli():
    """``cli(*argv)`` runs the app through Typer's runner; returns the Click result."""
    runner = CliRunner()

    def invoke(*argv, **kwargs):
        return runner.invoke(app, [str(a) for a in argv], **kwargs)

    return invoke


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "clijob.py"
    path.write_text(textwrap.dedent(SCRIPT))
    return path


# Three finished jobs of SCRIPT that the read-only ``jobs`` tests share (list, show, logs, metrics,
# result, wait, compare, tags): one set of real runs instead of one per test.
SHARED_JOBS = (
    ("first-job", ("--hp", "x=1", "--hp", "y=same", "--tag", "team=qml", "--tag", "stage=1")),
    ("second-job", ("--hp", "x=2", "--hp", "y=same", "--tag", "team=qml", "--tag", "stage=2")),
    ("third-job", ("--hp", "x=3")),
)


@pytest.fixture(scope="module")
def _shared_jobs_home(tmp_path_factory):
    home = tmp_path_factory.mktemp("shared-jobs-home")
    path = tmp_path_factory.mktemp("shared-jobs-script") / "clijob.py"
    path.write_text(textwrap.dedent(SCRIPT))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("QHYBRID_HOME", str(home))
        mp.setenv("NO_COLOR", "1")
        for name, extra in SHARED_JOBS:
            result = CliRunner().invoke(app, ["run", str(path), "--name", name, "--instance", "ml.m5.2xlarge",
                                              *extra])
            assert result.exit_code == 0, result.stderr
    return home


@pytest.fixture
def shared_jobs(_shared_jobs_home, monkeypatch):
    """QHYBRID_HOME with the three finished SHARED_JOBS (newest last); for tests that only read it."""
    monkeypatch.setenv("QHYBRID_HOME", str(_shared_jobs_home))
    return [name for name, _extra in SHARED_JOBS]
