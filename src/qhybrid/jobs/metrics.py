"""Metric lines (``Metrics - timestamp=...; name=value; iteration_number=...;``) and their columns.

``parse_line`` turns one printed line into a row; ``columns`` pivots rows into
the dict of columns that Braket's ``job.metrics()`` returns.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

MARKER = "Metrics - "
METRIC_TYPES = ("timestamp", "iteration_number")
STATISTICS = ("max", "min")
_ENCODER = json.JSONEncoder(ensure_ascii=False)  # one encoder: json.dumps(..., ensure_ascii=False) builds one a call


def to_json(row: dict) -> str:
    """One ``metrics.jsonl`` line of a row (names kept as written: ``λoss``, not ``\\u03bboss``)."""
    return _ENCODER.encode(row)


def _value(text: str) -> float | None:
    try:
        return float(text)  # as Braket: every value a float; others dropped
    except ValueError:
        return None


def parse_line(line: str, *, rank: int | None = None) -> dict | None:
    """Return the metric row of a printed line, or None if it is not a metric line.

    After the marker, each ``name=value;`` pair counts: the name is the last word before ``=``, any
    printable characters but ``=`` and ``;`` (``λoss``, ``val/acc``, ``f1@0.5``), the value a number
    (others are dropped, as Braket drops them). Rows of rank > 0 carry ``"rank": K`` so they never
    form rank 0's columns. Plain string operations, no regular expression: a script printing
    metrics in a tight loop must not outrun the supervisor reading them.
    """
    at = line.find(MARKER)
    if at < 0:
        return None
    row = {}
    for pair in line[at + len(MARKER):].split(";")[:-1]:  # only pairs closed by ";"
        name, eq, text = pair.partition("=")
        words = name.split()
        if not eq or not words or not words[-1].isprintable():
            continue
        value = _value(text)
        if value is not None:
            row[words[-1]] = value
    if not row:
        return None
    row.setdefault("timestamp", time.time())
    if rank:
        row["rank"] = rank
    return row


def tag_rank(line: str, rank: int) -> str:
    """Append ``rank=K;`` to a metric line printed by rank K > 0."""
    return f"{line.rstrip()} rank={rank};" if rank and MARKER in line else line


def read_rows(path: Path) -> list[dict]:
    """Read every row of a ``metrics.jsonl`` file (skipping a torn last line)."""
    rows = []
    if not path.exists():
        return rows
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue
    return rows


def columns(rows: list[dict], metric_type: str = "timestamp", statistic: str = "max", rank: int = 0) -> dict:
    """Pivot metric rows into columns keyed by ``metric_type`` (Braket's ``metrics()`` shape).

    Rows sharing a ``metric_type`` value merge; a metric seen twice there keeps
    the ``statistic`` ("max" or "min") of its values. Missing cells are None.
    """
    metric_type = str(getattr(metric_type, "value", metric_type)).lower()  # Braket's enums too
    statistic = str(getattr(statistic, "value", statistic)).lower()
    if metric_type not in METRIC_TYPES:
        raise ValueError(f"metric_type {metric_type!r} is not one of {METRIC_TYPES}")
    if statistic not in STATISTICS:
        raise ValueError(f"statistic {statistic!r} is not one of {STATISTICS}")
    pick = max if statistic == "max" else min
    table: dict = {}
    for row in rows:
        if row.get("rank", 0) != rank or metric_type not in row:
            continue
        key = row[metric_type]
        merged = table.setdefault(key, {})
        for name, value in row.items():
            if name == "rank":
                continue
            if name in merged and name not in METRIC_TYPES:
                try:
                    value = pick(merged[name], value)
                except TypeError:
                    pass
            elif name in merged:
                continue
            merged[name] = value
    names: list[str] = []
    for merged in table.values():
        names += [n for n in merged if n not in names]
    return {name: [merged.get(name) for merged in table.values()] for name in names}
