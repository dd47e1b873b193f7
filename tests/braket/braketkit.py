"""Constants of the Braket-compatibility tests (imported as ``from braketkit import ...``)."""
from __future__ import annotations

from pathlib import Path

EXAMPLES = Path(__file__).parent / "examples"
LIGHTNING = "local:pennylane/lightning.qubit"
QHYBRID_CPU = "local:qhybrid/qhybrid.cpu"
DEVICES = [LIGHTNING, QHYBRID_CPU]
SONAR = Path(__file__).parents[2] / "src" / "qhybrid" / "data" / "sonar.csv"
