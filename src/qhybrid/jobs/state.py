"""Job states and the one function that moves a job between them.

``JobState`` is a ``str`` enum, so ``row["state"] == "COMPLETED"`` keeps working.
Every change of state goes through ``transition``: it updates the index row only
if the job is in one of the states it may leave, and then records the state in
the job folder's ``state.json`` too, so the index can be rebuilt from the folders.

Example:
    >>> JobState.RUNNING in ACTIVE and JobState("FAILED").terminal
    True
"""
from __future__ import annotations

import enum
import json
import time


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
_ALLOWED_FROM = {
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
        from qhybrid.errors import SpecError

        raise SpecError(f"state {value!r} is not one of {', '.join(s.value for s in STATES)}") from None


def transition(name: str, to_state: JobState | str, *, from_states=None, **fields) -> bool:
    """Move job ``name`` to ``to_state`` if it is in one of ``from_states`` (default: every state
    it may be entered from); set ``fields`` (index columns) with it. Terminal states get ``ended``.

    Returns:
        True if the job moved; False if it was elsewhere (someone else moved it first).
    """
    from qhybrid.jobs import store

    to_state = parse(to_state)
    allowed = _ALLOWED_FROM[to_state]
    sources = allowed if from_states is None else tuple(parse(s) for s in from_states if parse(s) in allowed)
    if not sources:
        return False
    fields = {**fields, "state": to_state.value}
    if to_state in TERMINAL and fields.get("ended") is None:
        fields["ended"] = time.time()
    moved = store.update_if(name, [s.value for s in sources], **fields)
    if moved:
        record(name)
    return moved


def record(name: str) -> None:
    """Write the job's row (state, times, bill, reason) to its folder's ``state.json``; best effort."""
    from qhybrid.jobs import contract, store

    folder = store.job_dir(name)
    if not folder.is_dir():
        return
    try:
        row = store.get(name)
        contract.write_atomic(folder / contract.STATE_FILE, json.dumps({k: row.get(k) for k in RECORDED}))
    except (OSError, LookupError):
        pass


def recorded(folder) -> dict:
    """Read a job folder's ``state.json`` (``{}`` when missing or damaged)."""
    from qhybrid.jobs import contract

    try:
        doc = json.loads((folder / contract.STATE_FILE).read_text(encoding="utf-8"))
        return doc if isinstance(doc, dict) else {}
    except (OSError, ValueError):
        return {}
