"""An :class:`~qhybrid.estimate.predict.Estimate` as a table (Rich) or one JSON document.

Shared by ``qhybrid estimate`` and ``--dry-run`` on ``qaoa``, ``qml`` and ``run``.
"""
from __future__ import annotations

import json

from qhybrid.jobs.instances import format_usd


def _bytes(n: int | None) -> str:
    if n is None:
        return "?"
    return f"{n / 2**30:.1f}G" if n >= 2**30 else f"{n / 2**20:.0f}M"


def _seconds(s: float | None) -> str:
    if s is None:
        return "unknown"
    if s < 1:
        return f"{s * 1000:.3g} ms"
    if s < 120:
        return f"{s:.3g} s"
    if s < 7200:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.1f} h"


def format_cost(row) -> str:
    """``$0.0123`` / ``≈$0.0123`` (approximate price) / ``unknown``; ``-`` for this machine."""
    if row.target == "local":
        return "-"
    if row.cost_usd is None:
        return "unknown" if row.total_seconds is not None or row.price_kind == "" else "unknown time"
    return format_usd(row.cost_usd, row.approximate)


def _fits(row) -> str:
    return {True: "yes", False: "NO", None: "?"}[row.fits]


#: Columns left out, the first first, when the table is wider than the terminal (``output.table``);
#: target, s/iter, total and cost always stay whole.
DROP = ("how", "memory", "fits", "note", "device")


def rows_as_text(est) -> list[list[str]]:
    """The table's cells, one list per row (header first)."""
    out = [["target", "device", "fits", "memory", "s/iter", "total", "cost", "how", "note"]]
    for r in est.rows:
        marks = " ".join(m for m, who in (("cheapest", est.cheapest), ("fastest", est.fastest)) if who == r.target)
        if r.fits is False:
            marks = " ".join(filter(None, ("does not fit", marks)))
        out.append([r.target, r.device.rsplit("/", 1)[-1], _fits(r),
                    f"{_bytes(r.needed_bytes)}/{_bytes(r.available_bytes)}", _seconds(r.seconds_per_iteration),
                    _seconds(r.total_seconds), format_cost(r), r.method, marks])
    return out


def iterations_text(est) -> str:
    """``11 iterations``; ``expected ≈ 54 iterations (80 %: 32-76)`` for a run to convergence; ``unknown``."""
    if est.iterations is None:
        return "iterations unknown"
    if not est.iterations_expected:
        return f"{est.iterations} iterations"
    low, high = est.iterations_range or (est.iterations, est.iterations)
    return f"expected ≈{est.iterations} iterations (80 % of runs {low}-{high}), not known until it converges"


def heading(est) -> str:
    """The line above the table: workload, device, iterations, instances, and what total and cost are."""
    what = "expected (a run to convergence)" if est.iterations_expected else "predicted"
    return (f"{est.workload} on {est.device.replace('local:', '')}: {iterations_text(est)}; "
            f"{est.instance_count} x {est.instance_type}, world size {est.world_size}. "
            f"total and cost: {what}, for {est.instance_count} instance(s) of each type")


def to_json(est) -> str:
    """One JSON document of the whole estimate."""
    return json.dumps(est.to_dict())


def summary(est) -> str:
    """One line for the job's own instance type (the pre-flight message, ``jobs show``)."""
    r = est.row(est.instance_type)
    line = (f"predicted on {est.instance_count} x {r.target}: {_seconds(r.seconds_per_iteration)}/iteration, "
            f"{_seconds(r.total_seconds)}, {format_cost(r)} ({r.method})")
    if est.iterations_expected and r.total_seconds_range:
        low, high = r.total_seconds_range
        line += f"; expected: a run to convergence, 80 % of runs {_seconds(low)}-{_seconds(high)}"
    return line


def predicted_line(info: dict) -> str | None:
    """``jobs show``'s line of a ``Job.describe()`` dict: predicted beside measured (None: no prediction)."""
    pred = info.get("predicted")
    if not pred:
        return None
    span = pred.get("total_seconds_range")
    expected = (f", expected: a run to convergence, 80 % of runs {_seconds(span[0])}-{_seconds(span[1])}"
                if pred.get("iterations_expected") and span else "")
    how = pred["method"] + ("" if pred.get("calibrated", True) else ", NOT calibrated: nominal figures")
    text = (f"predicted {_seconds(pred['total_seconds'])} ({_seconds(pred['seconds_per_iteration'])}/iteration, "
            f"{how}{expected})")
    if info.get("measured_seconds") is not None:
        text += f", measured {_seconds(info['measured_seconds'])}"
        if info.get("measured_seconds_per_iteration") is not None:
            text += f" ({_seconds(info['measured_seconds_per_iteration'])}/iteration)"
        if info.get("measured_over_predicted"):
            text += f", {info['measured_over_predicted']:.2f}x the prediction"
    return text
