"""Shared job fixtures: job scripts written into tmp folders; helpers live in jobkit.py."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest


@pytest.fixture
def write_script(tmp_path):
    """Return ``write(name, body) -> Path``: a job script (dedented) in a fresh folder."""

    def write(name: str, body: str, folder: Path | None = None) -> Path:
        path = (folder or tmp_path) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(body), encoding="utf-8")
        return path

    return write


@pytest.fixture(autouse=True)
def _no_leftover_jobs(no_leftover_jobs):
    """Every test here: whatever job still runs at its end is cancelled (tests/conftest.py)."""
