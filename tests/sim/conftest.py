"""Fixtures for the engine tests (helpers live in simhelpers.py)."""
from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
