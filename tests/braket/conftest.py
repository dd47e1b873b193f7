"""Fixtures of the Braket-compatibility tests: an example folder copied into a fresh working folder."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from braketkit import EXAMPLES


@pytest.fixture
def example(tmp_path, monkeypatch):
    """Return ``copy(name) -> Path``: the example folder (or file) copied to tmp, made the working folder."""

    def copy(name: str) -> Path:
        src = EXAMPLES / name
        work = tmp_path / "work"
        if src.is_dir():
            shutil.copytree(src, work, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            work.mkdir()
            shutil.copy2(src, work / src.name)
        monkeypatch.chdir(work)
        monkeypatch.syspath_prepend(str(work))  # a notebook's own folder is importable, as in Jupyter
        return work

    return copy


@pytest.fixture(autouse=True)
def _no_leftover_jobs(no_leftover_jobs):
    """Every test here: whatever job still runs at its end is cancelled (tests/conftest.py)."""
