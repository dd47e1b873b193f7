"""Cancelling a job: ask its supervisor, and end every process of the job when it does not answer."""
from __future__ import annotations

import time

from qhybrid.errors import JobError
from qhybrid.jobs import contract, procs, store
from qhybrid.jobs.liveness import bill_to_heartbeat, check_alive, end_recorded
from qhybrid.jobs.state import ACTIVE, TERMINAL, JobState, transition


def _row(name: str) -> dict:
    row = store.get(name)
    return check_alive(row) if row["state"] in ACTIVE else row


def cancel_job(name: str, *, timeout: float = 10.0) -> str:
    """End job ``name``'s whole process tree; return its final state.

    A QUEUED job is cancelled at once; a running one is asked through its cancel file and, when its
    supervisor has not ended it within ``timeout`` seconds, its process groups are killed here.

    Raises:
        JobNotFoundError: no such job.
    """
    folder = store.job_dir(name)
    row = _row(name)
    if row["state"] in TERMINAL:
        return row["state"]
    if folder.is_dir():
        (folder / contract.CANCEL_FILE).touch()
    store.update(name, cancel_requested=1)
    if transition(name, JobState.CANCELLED, from_states=(JobState.QUEUED,), reason="cancelled on request"):
        return JobState.CANCELLED
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _row(name)["state"] in TERMINAL:
            return _row(name)["state"]
        time.sleep(0.05)
    row = store.get(name)  # the supervisor did not answer: end everything ourselves
    groups = store.processes(row)
    try:
        in_process = store.load_spec(name).in_process
    except JobError:
        in_process = False
    if not in_process:  # an in-process job's "supervisor" is the caller itself
        groups.insert(0, [row["supervisor_pid"], row["supervisor_start"]])
    procs.kill_groups(groups, grace=1.0)
    end_recorded(name)
    bill_to_heartbeat(row, JobState.CANCELLED, "cancelled on request (supervisor unresponsive)")
    return _row(name)["state"]
