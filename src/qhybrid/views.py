"""The job views that the CLI (``qhybrid jobs ...``) and the dashboard (``qhybrid ui``) both render.

Plain data, no formatting library: a job's *row* (what a listing shows), its *detail* (what its own
page shows), its *cost line* (so far, against the estimate and ``max_cost``), its metrics as
series, a bounded slice of its log, and one table of state colours. Reads the job runtime
(``qhybrid.jobs``) and never writes to it; nothing under ``jobs/`` imports this module.

    >>> from qhybrid import views
    >>> page = views.list_rows(state="RUNNING", limit=50)
    >>> page["total"], [r["name"] for r in page["rows"]]
"""
from __future__ import annotations

import json
import math
import re
import time
from datetime import datetime

#: One colour per state: a Rich style for the terminal and a CSS colour for the web page.
STATE_COLOURS = {
    "QUEUED": ("blue", "#57606a"),
    "RUNNING": ("cyan", "#0969da"),
    "COMPLETED": ("green", "#1a7f37"),
    "FAILED": ("bold red", "#cf222e"),
    "CANCELLED": ("yellow", "#9a6700"),
    "DAMAGED": ("magenta", "#8250df"),
    "INSTALLING": ("cyan", "#0969da"),  # a RUNNING job building its requirements environment
}
TIME_METRICS = ("iteration_seconds", "epoch_seconds")
NOT_PLOTTED = ("timestamp", "iteration_number", "layers")
_SCRIPT_EXIT = re.compile(r"^the job script exited with code -?\d+: (?=\S)")  # its exception says more
LOG_PAGE = 64 * 1024  # bytes of log one call returns at most


def terminal_style(state: str) -> str:
    """The Rich style of ``state`` ('' for an unknown one)."""
    return STATE_COLOURS.get(str(state), ("", ""))[0]


def web_colour(state: str) -> str:
    """The CSS colour of ``state``."""
    return STATE_COLOURS.get(str(state), ("", "#57606a"))[1]


def _num(value: float, digits: int = 4) -> str:
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.{digits}g}"


def result_of(job, info: dict) -> dict | None:
    """A completed job's result, None otherwise (or when it cannot be read)."""
    if info["state"] != "COMPLETED" or info.get("damaged"):
        return None
    try:
        return job.result()
    except Exception:  # a foreign, pickled or unreadable result: the views still show the job
        return None


def result_summary(job, info: dict, result: dict | None = None) -> str:
    """A short answer: a built-in job's result (``cut 21/21``), a failed or cancelled job's reason,
    else the last value of its first metric."""
    if info.get("damaged"):
        return "damaged: " + info["damaged"].splitlines()[0]
    if info["state"] in ("FAILED", "CANCELLED"):
        lines = (info.get("failure_reason") or "").strip().splitlines()
        return _SCRIPT_EXIT.sub("", lines[-1]) if lines else "no reason recorded"
    result = result if result is not None else result_of(job, info)
    if result:
        if "best_cut" in result and "optimum_cut" in result:
            return f"cut {_num(result['best_cut'])}/{_num(result['optimum_cut'])}"
        if isinstance(result.get("val_accuracy"), (int, float)):
            return f"val {result['val_accuracy']:.3f}"
        if "best_value" in result and "optimum" in result:
            return f"energy {_num(result['best_value'])}/{_num(result['optimum'])}"
    for name, values in job.metrics().items():
        if name in NOT_PLOTTED or name in TIME_METRICS:
            continue
        nums = [v for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
        if nums:
            return f"{name} {_num(float(nums[-1]))}"
    return ""


def duration(info: dict) -> float | None:
    """Seconds from start to end (to now while it runs); None before it started."""
    if not info.get("started"):
        return None
    start = datetime.fromisoformat(info["started"]).timestamp()
    end = datetime.fromisoformat(info["ended"]).timestamp() if info.get("ended") else time.time()
    return max(0.0, end - start)


def short_duration(seconds: float | None) -> str:
    """``42s``, ``3m05s``, ``2h07m``; '' for None."""
    if seconds is None:
        return ""
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def short_time(iso: str | None) -> str:
    """A time, short: hours and minutes today, else month and day."""
    if not iso:
        return ""
    t = datetime.fromisoformat(iso).astimezone()
    return t.strftime("%H:%M") if t.date() == datetime.now().astimezone().date() else t.strftime("%b %d")


def json_safe(value):
    """``value`` with what JSON cannot hold made JSON-safe: tuples as lists, numpy scalars as
    numbers, NaN and infinities as None, anything else as its ``repr``."""
    def fix(v):
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, dict):
            return {str(k): fix(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [fix(x) for x in v]
        return v

    return fix(json.loads(json.dumps(value, default=lambda o: o.item() if hasattr(o, "item") else repr(o))))


def usd(value: float | None, approximate: bool = False) -> str:
    """``$0.0123`` (``≈`` for an approximate price), ``?`` without a price."""
    from qhybrid.jobs.instances import format_usd

    return "?" if value is None else format_usd(value, approximate)


INSTALLING_PHASE = "installing requirements"  # supervisor.INSTALLING: the row's phase while pip runs


def with_phase(info: dict) -> dict:
    """``describe()`` plus ``phase``: what a RUNNING job is doing before its script (``installing
    requirements``), else None."""
    from qhybrid.jobs import store

    try:
        phase = store.get(info["name"]).get("phase") if str(info["state"]) == "RUNNING" else None
    except Exception:  # noqa: BLE001 - a job removed meanwhile: no phase
        phase = None
    return {**info, "phase": phase}


def shown_state(info: dict) -> str:
    """The state a listing shows: DAMAGED for an unreadable folder, INSTALLING while a RUNNING job's
    environment is built, else the state."""
    if info.get("damaged"):
        return "DAMAGED"
    return "INSTALLING" if info.get("phase") == INSTALLING_PHASE else str(info["state"])


def limits_text(spec) -> str | None:
    """The job's stopping conditions (``max_runtime 432000 s (the default, 5 days), max_cost $2``)."""
    from qhybrid.jobs import contract

    if spec is None:
        return None
    runtime = spec.max_runtime or contract.DEFAULT_MAX_RUNTIME_S
    text = f"max_runtime {runtime:g} s" + (" (the default, 5 days)" if runtime == contract.DEFAULT_MAX_RUNTIME_S else "")
    return text + (f", max_cost ${spec.max_cost:g}" if spec.max_cost else "")


def job_row(job, info: dict | None = None) -> dict:
    """What a listing shows of a job: name, state, device, instance, times, result summary, cost.

    Args:
        job: a ``Job``.
        info: its ``describe()`` (read when not given).

    Returns:
        A JSON-ready dict; ``state`` is ``DAMAGED`` for a job whose folder is unreadable and
        ``INSTALLING`` for a RUNNING job building its requirements environment (``phase``).
    """
    info = info or job.describe()
    if "phase" not in info:
        info = with_phase(info)
    seconds = duration(info)
    return {
        "name": info["name"],
        "state": shown_state(info),
        "phase": info["phase"],
        "device": (info["device"] or "?").split("/")[-1],
        "device_arn": info["device"],
        "instance": info["instance_type"] or "?",
        "instance_count": info["instance_count"],
        "created": info["created"],
        "started": info["started"],
        "ended": info["ended"],
        "duration_s": seconds,
        "duration": short_duration(seconds),
        "result": result_summary(job, info),
        "cost_usd": info["estimated_cost_usd"],
        "cost": usd(info["estimated_cost_usd"], info.get("price_kind") == "approximate"),
    }


def cost_view(info: dict, max_cost: float | None = None) -> dict:
    """The cost so far against the estimate and the budget.

    Returns:
        ``so_far_usd``, ``estimate_usd`` (the stored prediction's cost on this instance, or None),
        ``max_cost_usd``, ``billed_seconds``, ``text`` (one line for people).
    """
    approximate = info.get("price_kind") == "approximate"
    predicted = (info.get("predicted") or {}).get("cost_usd")
    text = f"{usd(info['estimated_cost_usd'], approximate)} so far"
    if info.get("billed_seconds") is not None:
        text += f" (billed {info['billed_seconds']:g} s x {info['instance_count']} {info['instance_type']})"
    if predicted is not None:
        text += f"; estimate {usd(predicted, approximate)}"
    if max_cost is not None:
        text += f"; max_cost {usd(max_cost)}"
    return {"so_far_usd": info["estimated_cost_usd"], "estimate_usd": predicted, "max_cost_usd": max_cost,
            "billed_seconds": info.get("billed_seconds"), "approximate": approximate, "text": text}


def metric_series(job) -> dict:
    """The job's metrics for charts: ``{"x": "iteration"|"seconds", "series": {name: [[x, y], ...]}}``.

    One point per iteration when the job logs ``iteration_number`` (else per second since its first
    metric); rank 0 only; non-finite values left out.
    """
    cols = job.metrics(metric_type="iteration_number")
    xname = "iteration"
    if not cols.get("iteration_number"):
        cols = job.metrics(metric_type="timestamp")
        stamps = [t for t in cols.get("timestamp", []) if t is not None]
        t0 = min(stamps) if stamps else 0.0
        xs, xname = [None if t is None else t - t0 for t in cols.get("timestamp", [])], "seconds"
    else:
        xs = cols["iteration_number"]
    series = {}
    for name, ys in cols.items():
        if name in NOT_PLOTTED:
            continue
        pts = [[x, y] for x, y in zip(xs, ys)
               if x is not None and isinstance(y, (int, float)) and math.isfinite(y)]
        if pts:
            series[name] = pts
    return {"x": xname, "series": series}


def log_slice(job, *, offset: int | None = None, limit: int = LOG_PAGE) -> dict:
    """A bounded piece of the job's log: its tail by default, else ``limit`` bytes from ``offset``.

    Returns:
        ``text``, ``start`` and ``end`` (byte offsets of the piece) and ``size`` (the log's bytes);
        ``start > 0`` means there is more before it.
    """
    from qhybrid.jobs import contract

    limit = max(1, min(int(limit), LOG_PAGE))
    path = job.folder / contract.LOGS_DIR / contract.JOB_LOG
    try:
        with open(path, "rb") as f:
            size = f.seek(0, 2)
            start = max(0, size - limit) if offset is None else max(0, min(int(offset), size))
            f.seek(start)
            data = f.read(limit)
    except OSError:
        return {"text": "", "start": 0, "end": 0, "size": 0}
    return {"text": data.decode("utf-8", errors="replace"), "start": start, "end": start + len(data), "size": size}


def checkpoints(job) -> list[dict]:
    """The job's checkpoint files: name and bytes."""
    from qhybrid.jobs import contract

    folder = job.folder / contract.CHECKPOINT_DIR
    try:
        return [{"name": p.name, "bytes": p.stat().st_size} for p in sorted(folder.iterdir()) if p.is_file()]
    except OSError:
        return []


SHOWN_ELSEWHERE = 3  # the cheapest other instance types named on the cost line


def elsewhere(info: dict) -> str:
    """What the same run costs on the cheapest other instance types, and how that was reckoned
    ("" when nothing is known)."""
    others = info.get("cost_on_other_instances_usd")
    if not others:
        return ""
    cheapest = sorted(((k, v) for k, v in others.items() if v is not None), key=lambda kv: kv[1])[:SHOWN_ELSEWHERE]
    basis = info.get("cost_on_other_instances_basis")
    how = {"model": "by the estimate's model", "this run": "this run scaled by each type's core speed"}.get(
        basis, f"by {basis}")
    more = len(others) - len(cheapest)
    return ("same run on " + ", ".join(f"{k}: {usd(v)}" for k, v in cheapest) + f" ({how}"
            + (f"; {more} more types: qhybrid jobs show {info['name']} --json" if more > 0 else "") + ")")


def job_detail(job) -> dict:
    """Everything a job's own page shows: its row, hyperparameters, tags, cost against the estimate
    and budget, the estimate beside the measurement, result, checkpoints, environment, failure."""
    from qhybrid.errors import JobError
    from qhybrid.jobs import environment

    info = with_phase(job.describe())
    try:
        spec = job.spec()
    except JobError:
        spec = None
    result = result_of(job, info)
    row = job_row(job, info)
    optimum = None
    for key in ("optimum", "optimum_energy"):
        if isinstance((result or {}).get(key), (int, float)):
            optimum = result[key]
            break
    return {
        **row,
        "entry_point": info["entry_point"],
        "distribution": info["distribution"],
        "world_size": info["world_size"],
        "hyperparameters": info["hyperparameters"] or {},
        "tags": info["tags"] or {},
        "cost_view": cost_view(info, spec.max_cost if spec else None),
        "elsewhere": elsewhere(info),
        "max_runtime": spec.max_runtime if spec else None,
        "limits": limits_text(spec),
        "predicted": info["predicted"],
        "measured_seconds": info["measured_seconds"],
        "measured_seconds_per_iteration": info["measured_seconds_per_iteration"],
        "measured_over_predicted": info["measured_over_predicted"],
        "result_data": result,
        "optimum": optimum,
        "checkpoints": checkpoints(job),
        "environment": environment.read(job.folder),
        "dependency_environment": info["environment"],
        "failure_reason": info["failure_reason"],
        "traceback_tail": info["traceback_tail"],
        "damaged": info["damaged"],
        "folder": info["folder"],
    }


def list_rows(*, state: str | None = None, query: str = "", offset: int = 0, limit: int = 50,
              cache: dict | None = None) -> dict:
    """A page of the job table, newest first, filtered by state and a substring of name, device or
    instance; only the page's jobs are read in full, so a store of thousands answers quickly.

    Args:
        cache: a dict kept between calls (by a server): the rows of ended jobs, which no longer
            change, are read once.

    Returns:
        ``{"total": matching jobs, "offset", "limit", "rows": [job_row, ...]}``.
    """
    from qhybrid.jobs import store
    from qhybrid.submit import Job

    rows = list(reversed(store.rows(state)))
    q = query.strip().lower()
    if q:
        rows = [r for r in rows if any(q in str(r.get(k) or "").lower() for k in ("name", "device", "instance_type"))]
    offset, limit = max(0, int(offset)), max(1, min(int(limit), 500))
    page, home = [], str(store.home())
    for r in rows[offset:offset + limit]:
        key = (home, r["name"], r["created"], r["ended"])
        if cache is not None and key in cache:
            page.append(cache[key])
            continue
        try:
            row = job_row(Job(r["name"]))
        except Exception:  # deleted between the listing and the read: leave it out
            continue
        if cache is not None and row["state"] in ("COMPLETED", "FAILED", "CANCELLED") and r["ended"]:
            if len(cache) > 20000:
                cache.clear()
            cache[key] = row
        page.append(row)
    return {"total": len(rows), "offset": offset, "limit": limit, "rows": page}
