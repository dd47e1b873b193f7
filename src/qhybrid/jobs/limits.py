"""A job's limits, checked alike while its environment is built and while its script runs.

The supervisor asks these small functions; each returns the reason to record (one line) or None.
``max_runtime`` defaults to Braket's 5 days; a data-parallel job whose first rank ended gives the
others ``rank_grace()`` seconds (``QHYBRID_RANK_GRACE``, default 60).
"""
from __future__ import annotations

import os

from qhybrid.jobs import contract

DURING_INSTALL = "while installing the job's requirements"


def max_runtime(spec) -> float:
    """The job's max_runtime in seconds (Braket's 432,000 s when it set none)."""
    return spec.max_runtime or contract.DEFAULT_MAX_RUNTIME_S


def rank_grace() -> float:
    """Seconds the other ranks of a job get once one rank ended (``QHYBRID_RANK_GRACE``, default 60)."""
    try:
        value = float(os.environ.get(contract.RANK_GRACE_ENV, contract.DEFAULT_RANK_GRACE_S))
    except ValueError:
        return contract.DEFAULT_RANK_GRACE_S
    return value if value >= 0 and value == value else contract.DEFAULT_RANK_GRACE_S


def hung(codes: dict, grace: float) -> str:
    """The reason of a job stopped because ranks still ran ``grace`` s after one ended."""
    done = sorted(r for r, c in codes.items() if c == 0)
    left = sorted(r for r, c in codes.items() if c is None)
    return (f"rank {', '.join(map(str, done))} finished but rank {', '.join(map(str, left))} still ran "
            f"{grace:g} s later (hung?); they were stopped ({contract.RANK_GRACE_ENV} sets the grace period)")


def unwritable(err: OSError, home) -> str:
    """The reason of a job whose log or metrics could not be written (a full disk)."""
    return (f"the job's log or metrics could not be written ({err.strerror or err}); "
            f"free space under {home} and run it again")


def building_stop(spec, folder, *, started: float, now: float, stop_signal, poll_s: float) -> str | None:
    """Why an environment build must stop now (cancel, a signal, max_runtime, the budget), or None."""
    limit = max_runtime(spec)
    budget_s = spec.budget_seconds()
    if (folder / contract.CANCEL_FILE).exists():
        return f"cancelled on request ({DURING_INSTALL})"
    if stop_signal:
        return f"supervisor stopped by signal {stop_signal} ({DURING_INSTALL})"
    if now - started > limit:
        return f"max_runtime of {limit:g} s exceeded {DURING_INSTALL}"
    if budget_s is not None and now - started >= budget_s - 4 * poll_s:
        return f"max_cost of ${spec.max_cost:g} reached {DURING_INSTALL}"
    return None
