"""Job states as data: the ``JobState`` enum, its groups, the moves allowed, what ``state.json`` keeps.

``JobState`` is a ``str`` enum, so ``row["state"] == "COMPLETED"`` keeps working. This module
writes nothing: the one function that changes a job's state is ``state.transition``, above
the index (``states`` sits below it, so the index and its recovery can name states).

Example:
    >>> JobState.RUNNING in ACTIVE and JobState("FAILED").terminal
    True
"""
from __future__ import annotations

import enum
import json

from qhybrid.errors import SpecError
from qhybrid.jobs import contract


class JobState(str, enum.Enum):
    """QUEUED -> RUNNING -> COMPLETED | FAILED | CANCELLED (QUEUED may end directly)."""

    QUEUED = "QUEUED"
    RUNNING = "RUNNING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @property
    def terminal(self) -> bool:
        return self in TERMINAL


ACTIVE = (JobState.QUEUED, JobState.RUNNING)
TERMINAL = (JobState.COMPLETED, JobState.FAILED, JobState.CANCELLED)
STATES = tuple(JobState)
# which states each state may be entered from
ALLOWED_FROM = {
    JobState.QUEUED: (),
    JobState.RUNNING: (JobState.QUEUED,),
    JobState.COMPLETED: (JobState.RUNNING,),
    JobState.FAILED: ACTIVE,
    JobState.CANCELLED: ACTIVE,
}
# the row's columns kept in state.json as well (what a rebuilt index needs)
RECORDED = ("state", "created", "started", "ended", "supervisor_pid", "supervisor_start", "reason",
            "traceback", "billed_seconds", "cost", "heartbeat")


def parse(value) -> JobState:
    """Return the JobState of a string.

    Raises:
        SpecError: naming the value and the valid states.
    """
    try:
        return JobState(str(getattr(value, "value", value)).upper())
    except ValueError:
        raise SpecError(f"state {value!r} is not one of {', '.join(s.value for s in STATES)}") from None


def recorded(folder) -> dict:
    """Read a job folder's ``state.json`` (``{}`` when missing or damaged)."""
    try:
        doc = json.loads((folder / contract.STATE_FILE).read_text(encoding="utf-8"))
        return doc if isinstance(doc, dict) else {}
    except (OSError, ValueError):
        return {}
