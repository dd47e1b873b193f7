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
        from qhybrid.jobs import Job

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
