"""Shared test configuration: an isolated QHYBRID_HOME, CUDA skipping, the ``kernel_set`` fixture."""
from __future__ import annotations

from pathlib import Path

import os

import pytest

try:
    import torch

    HAS_CUDA = torch.cuda.is_available()
except Exception:  # pragma: no cover
    HAS_CUDA = False

if not HAS_CUDA:
    # Triton's kernels run on CPU tensors under its interpreter, which ``triton.jit`` reads when a
    # kernel module is imported: set before anything (kernelsets below) imports the Triton set.
    os.environ.setdefault("TRITON_INTERPRET", "1")

from kernelsets import KERNEL_SETS  # noqa: E402  (after TRITON_INTERPRET)


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    """Every test gets its own QHYBRID_HOME so no test sees another's jobs."""
    home = tmp_path_factory.mktemp("qhybrid-home")
    monkeypatch.setenv("QHYBRID_HOME", str(home))
    return home


@pytest.fixture
def home(_isolated_home):
    return Path(_isolated_home)


@pytest.fixture
def no_leftover_jobs(_isolated_home):
    """After the test, cancel whatever job of its home still runs, so a failing test leaves no
    processes (the job tests' folders use it in every test)."""
    yield
    if not (Path(_isolated_home) / "index.db").exists():
        return
    from qhybrid.submit import Job

    for job in Job.list():
        if job.folder.is_dir() and job.state() in ("QUEUED", "RUNNING"):
            job.cancel(timeout=5)


@pytest.fixture(params=KERNEL_SETS)
def kernel_set(request):
    """Each registered kernel set in turn (``tests/kernelsets.py``), loaded; unavailable ones skipped."""
    from qhybrid.sim.kernels import get_kernel_set

    return get_kernel_set(request.param)


def pytest_collection_modifyitems(config, items):
    skip_cuda = pytest.mark.skip(reason="CUDA not available")
    for item in items:
        if "cuda" in item.keywords and not HAS_CUDA:
            item.add_marker(skip_cuda)
