"""The one function that moves a job between states (``transition``), and its record in the folder.

Every change of state goes through ``transition``: it updates the index row only
if the job is in one of the states it may leave, and then records the state in
the job folder's ``state.json`` too, so the index can be rebuilt from the folders.
The states themselves are data in ``states`` (re-exported here).

Example:
    >>> JobState.RUNNING in ACTIVE and JobState("FAILED").terminal
    True
"""
from __future__ import annotations

import json
import time

from qhybrid.jobs import contract, index
from qhybrid.jobs.states import (  # noqa: F401  (re-exported: the states' old home)
    ACTIVE,
    ALLOWED_FROM,
    RECORDED,
    STATES,
    TERMINAL,
    JobState,
    parse,
    recorded,
)


def transition(name: str, to_state: JobState | str, *, from_states=None, **fields) -> bool:
    """Move job ``name`` to ``to_state`` if it is in one of ``from_states`` (default: every state
    it may be entered from); set ``fields`` (index columns) with it. Terminal states get ``ended``.

    Returns:
        True if the job moved; False if it was elsewhere (someone else moved it first).
    """
    to_state = parse(to_state)
    allowed = ALLOWED_FROM[to_state]
    sources = allowed if from_states is None else tuple(parse(s) for s in from_states if parse(s) in allowed)
    if not sources:
        return False
    fields = {**fields, "state": to_state.value}
    if to_state in TERMINAL and fields.get("ended") is None:
        fields["ended"] = time.time()
    moved = index.update_if(name, [s.value for s in sources], **fields)
    if moved:
        record(name)
    return moved


def record(name: str) -> None:
    """Write the job's row (state, times, bill, reason) to its folder's ``state.json``; best effort."""
    folder = index.job_dir(name)
    if not folder.is_dir():
        return
    try:
        row = index.get(name)
        contract.write_atomic(folder / contract.STATE_FILE, json.dumps({k: row.get(k) for k in RECORDED}))
    except (OSError, LookupError):
        pass
