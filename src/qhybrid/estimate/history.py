"""An arbitrary script's time, from its own history: earlier jobs of the same source and hyperparameters.

A match is a COMPLETED job in the store with the same source path, entry point,
device and hyperparameters (``sagemaker_*`` keys aside). Its measured run time
(start to end, on this machine) is taken as the median over the matches and
scaled to another machine by the ratio of one core's peak. No match: unknown.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

from qhybrid.errors import JobError
from qhybrid.jobs import metrics, store
from qhybrid.jobs.spec import resolve_entry_point


@dataclass(frozen=True)
class History:
    """What earlier runs of a script measured here."""

    jobs: tuple[str, ...]
    seconds: float  # median run time (s), start to end
    iterations: int | None  # the largest iteration_number + 1 logged, when the script logs one


def _plain(hp: dict) -> dict:
    return {str(k): str(v) for k, v in (hp or {}).items() if not str(k).startswith("sagemaker_")}


def script_history(*, source, entry_point: str | None, device: str, hyperparameters: dict | None) -> History | None:
    """The measured history of a script, or None when no earlier job matches."""
    src = Path(source).resolve()
    if not src.exists():
        return None
    entry = resolve_entry_point(src, entry_point)
    want = _plain(hyperparameters)
    found, times, iterations = [], [], []
    for row in store.rows("COMPLETED"):
        if not (row["started"] and row["ended"]):
            continue
        try:
            spec = store.load_spec(row["name"])
        except JobError:  # a damaged job has no history to give
            continue
        if (spec.source, spec.entry_point, spec.device) != (str(src), entry, device) or _plain(spec.hyperparameters) != want:
            continue
        found.append(row["name"])
        times.append(row["ended"] - row["started"])
        rows = metrics.read_rows(store.job_dir(row["name"]) / "metrics.jsonl")
        its = [int(r["iteration_number"]) for r in rows if r.get("iteration_number") is not None]
        if its:
            iterations.append(max(its) + 1)
    if not found:
        return None
    return History(jobs=tuple(found), seconds=statistics.median(times),
                   iterations=max(iterations) if iterations else None)
