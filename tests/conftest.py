"""Shared test configuration: an isolated QHYBRID_HOME, CUDA skipping."""
from __future__ import annotations

import pytest

try:
    import torch

    HAS_CUDA = torch.cuda.is_available()
except Exception:  # pragma: no cover
    HAS_CUDA = False


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    """Every test gets its own QHYBRID_HOME so no test sees another's jobs."""
    home = tmp_path_factory.mktemp("qhybrid-home")
    monkeypatch.setenv("QHYBRID_HOME", str(home))
    return home


def pytest_collection_modifyitems(config, items):
    skip_cuda = pytest.mark.skip(reason="CUDA not available")
    for item in items:
        if "cuda" in item.keywords and not HAS_CUDA:
            item.add_marker(skip_cuda)
