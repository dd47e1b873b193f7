"""Constants of the Braket-compatibility tests (imported as ``from braketkit import ...``)."""
from __future__ import annotations

from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parent / "examples"
LIGHTNING = "local:pennylane/lightning.qubit"
QHYBRID_CPU = "local:qhybrid/qhybrid.cpu"
DEVICES = [LIGHTNING, QHYBRID_CPU]


def on(default: str, choices=DEVICES) -> list:
    """``choices`` as parameters with every one but ``default`` marked ``slow``: the default suite runs a
    notebook or script on one device (alternating between ours and lightning.qubit across them, so both
    run every launch style between them), ``make test-all`` on each. Each job costs seconds of start-up."""
    return [pytest.param(c, marks=() if c == default else pytest.mark.slow) for c in choices]
SONAR = Path(__file__).parents[2] / "src" / "qhybrid" / "data" / "sonar.csv"
