"""The record of a job's descendants (``descendants.json``), and ending them when their supervisor died."""
from __future__ import annotations

import json

from qhybrid.jobs import contract, procs


def read_descendants(folder) -> list[list]:
    """The ``[pid, start time]`` pairs a supervisor recorded in ``folder`` (``[]`` when none)."""
    try:
        found = json.loads((folder / contract.DESCENDANTS_FILE).read_text(encoding="utf-8"))
        return [list(x) for x in found if isinstance(x, list) and len(x) == 2]
    except (OSError, ValueError, TypeError):
        return []


def end_recorded(folder) -> None:
    """End what a dead supervisor recorded: its descendants (``descendants.json``)."""
    procs.kill_pids(read_descendants(folder), grace=1.0)
