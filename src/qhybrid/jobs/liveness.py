"""Jobs whose supervisor is gone: found by whoever looks, their processes ended, billed to the
last heartbeat (not to "now"), marked FAILED (or CANCELLED when a cancel found it unresponsive)."""
from __future__ import annotations

import subprocess
import time

from qhybrid.errors import QhybridError
from qhybrid.jobs import contract, instances, procs, store
from qhybrid.jobs.descendants import end_recorded as end_descendants
from qhybrid.jobs.state import ACTIVE, JobState, transition

SUPERVISORS: dict[str, subprocess.Popen] = {}  # started here; reaped when looked at, so none stays a zombie
_NO_PID_GRACE_S = 30.0


def end_recorded(name: str) -> None:
    """End the descendants the dead supervisor of job ``name`` recorded."""
    end_descendants(store.job_dir(name))


def bill_to_heartbeat(row: dict, state: JobState, reason: str) -> None:
    """End a job whose supervisor is gone: billed from its start to its last heartbeat (not to now)."""
    started = row["started"]
    last = max(x for x in (row.get("heartbeat"), started) if x is not None) if started else None
    fields = {"reason": reason}
    if started is not None:
        billed = instances.ceil_seconds(last - started)
        try:
            cost = instances.cost(billed, store.load_spec(row["name"]).frozen_instance(), row["instance_count"] or 1)
        except QhybridError:
            cost = None
        fields.update(ended=last, billed_seconds=billed, cost=cost)
    transition(row["name"], state, **fields)


def check_alive(row: dict) -> dict:
    """Mark an active job whose supervisor is gone FAILED (and end its processes); return the row."""
    name = row["name"]
    proc = SUPERVISORS.get(name)
    if proc is not None and proc.poll() is not None:
        SUPERVISORS.pop(name, None)
    pid, started = row["supervisor_pid"], row["supervisor_start"]
    if pid is None:
        if time.time() - (row["created"] or 0) < _NO_PID_GRACE_S:
            return row
    elif procs.alive(pid, started):
        return row
    fresh = store.get(name)
    if fresh["state"] not in ACTIVE:  # it finished while we looked
        return fresh
    procs.kill_groups(store.processes(fresh), grace=1.0)
    end_recorded(name)
    reason = f"the job's supervisor (pid {pid}) died; its processes were stopped"
    sup_log = store.job_dir(name) / contract.LOGS_DIR / contract.SUPERVISOR_LOG
    try:
        last = sup_log.read_text(errors="replace").strip().splitlines()[-1:] if sup_log.exists() else []
    except OSError:
        last = []
    if last:
        reason += f" (supervisor's last words: {last[0][:200]})"
    bill_to_heartbeat(fresh, JobState.FAILED, reason)
    return store.get(name)
