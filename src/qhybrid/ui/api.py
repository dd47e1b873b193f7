"""The dashboard's JSON API, as plain functions of (method, path, query) -> (status, document).

    GET  /api/jobs?state=RUNNING&q=text&offset=0&limit=50   a page of the jobs table, newest first
    GET  /api/jobs/NAME?log_offset=B                         a job: detail, metric series, log tail
    GET  /api/jobs/NAME/log?offset=B&limit=N                 a piece of its log (paged)
    GET  /api/compare?jobs=A,B                               several jobs' series and estimate vs measured
    GET  /api/states                                         the state colours
    POST /api/jobs/NAME/cancel                               cancel it (the CLI's ``jobs cancel``)

Job data go out as JSON only; the pages put them on screen as text.
"""
from __future__ import annotations

import json
from http import HTTPStatus

from qhybrid import views
from qhybrid.errors import JobNotFoundError, QhybridError
from qhybrid.jobs.states import JobState

STATES = tuple(s.value for s in JobState)
COMPARE_MAX = 12
_ENDED_ROWS: dict = {}  # rows of ended jobs, which no longer change (views.list_rows' cache)


def dumps(doc) -> bytes:
    """``doc`` as JSON bytes (``views.json_safe``: NaN and infinities become null)."""
    return json.dumps(views.json_safe(doc), allow_nan=False).encode()


def _one(query: dict, key: str, default: str = "") -> str:
    return (query.get(key) or [default])[0]


def _int(query: dict, key: str, default: int | None) -> int | None:
    text = _one(query, key)
    if not text:
        return default
    try:
        return int(text)
    except ValueError:
        raise _BadRequest(f"{key}={text!r} is not a whole number") from None


class _BadRequest(Exception):
    pass


def cancel(name: str) -> dict:
    """Cancel job ``name`` the way ``qhybrid jobs cancel`` does; return its name and final state."""
    from qhybrid.submit import Job

    return {"job": name, "state": str(Job.get(name).cancel())}


def jobs_page(query: dict) -> dict:
    """``GET /api/jobs``."""
    state = _one(query, "state").upper() or None
    if state is not None and state not in STATES:
        raise _BadRequest(f"state={state!r} is not one of {', '.join(STATES)}")
    return views.list_rows(state=state, query=_one(query, "q"), offset=_int(query, "offset", 0),
                           limit=_int(query, "limit", 50), cache=_ENDED_ROWS)


def job_page(name: str, query: dict) -> dict:
    """``GET /api/jobs/NAME``: the detail, the metric series and the log's tail (or the page at
    ``log_offset``)."""
    from qhybrid.submit import Job

    job = Job.get(name)
    detail = views.job_detail(job)
    return {**detail, "metrics": views.metric_series(job),
            "log": views.log_slice(job, offset=_int(query, "log_offset", None))}


def compare_page(query: dict) -> dict:
    """``GET /api/compare?jobs=A,B``: each job's row, series, optimum and estimate beside measured."""
    from qhybrid.submit import Job

    names = [n for n in _one(query, "jobs").split(",") if n][:COMPARE_MAX]
    if not names:
        raise _BadRequest("jobs=NAME,NAME,... names no job")
    out = []
    for name in names:
        job = Job.get(name)
        d = views.job_detail(job)
        pred = d["predicted"] or {}
        out.append({"name": name, "row": {k: d[k] for k in ("state", "device", "instance", "duration", "result", "cost")},
                    "hyperparameters": d["hyperparameters"], "optimum": d["optimum"],
                    "metrics": views.metric_series(job),
                    "estimate": {"seconds": pred.get("total_seconds"), "seconds_per_iteration": pred.get("seconds_per_iteration"),
                                 "cost_usd": pred.get("cost_usd")},
                    "measured": {"seconds": d["measured_seconds"], "seconds_per_iteration": d["measured_seconds_per_iteration"],
                                 "cost_usd": d["cost_usd"]}})
    return {"jobs": out}


def answer(method: str, path: str, query: dict) -> tuple[int, object]:
    """Route one API request; errors become ``{"error": ...}`` with 400, 404 or 405."""
    parts = [p for p in path.split("/") if p][1:]  # after "api"
    try:
        if parts == ["jobs"] and method == "GET":
            return HTTPStatus.OK, jobs_page(query)
        if parts == ["states"] and method == "GET":
            return HTTPStatus.OK, {s: views.web_colour(s) for s in views.STATE_COLOURS}
        if parts == ["compare"] and method == "GET":
            return HTTPStatus.OK, compare_page(query)
        if len(parts) == 2 and parts[0] == "jobs" and method == "GET":
            return HTTPStatus.OK, job_page(parts[1], query)
        if len(parts) == 3 and parts[0] == "jobs" and parts[2] == "log" and method == "GET":
            from qhybrid.submit import Job

            return HTTPStatus.OK, views.log_slice(Job.get(parts[1]), offset=_int(query, "offset", None),
                                                  limit=_int(query, "limit", views.LOG_PAGE))
        if len(parts) == 3 and parts[0] == "jobs" and parts[2] == "cancel":
            if method != "POST":
                return HTTPStatus.METHOD_NOT_ALLOWED, {"error": "cancel is a POST"}
            return HTTPStatus.OK, cancel(parts[1])
    except JobNotFoundError as err:
        return HTTPStatus.NOT_FOUND, {"error": str(err)}
    except _BadRequest as err:
        return HTTPStatus.BAD_REQUEST, {"error": str(err)}
    except QhybridError as err:
        return HTTPStatus.CONFLICT, {"error": str(err)}
    return HTTPStatus.NOT_FOUND, {"error": f"no API {method} {path}"}
