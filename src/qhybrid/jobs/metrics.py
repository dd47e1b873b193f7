"""Metric lines (``Metrics - timestamp=...; name=value; iteration_number=...;``) and their columns.

``parse_line`` turns one printed line into a row; ``jsonl`` turns a block of printed lines into
the ``metrics.jsonl`` text of their rows at once (the supervisor reads a script's output in
chunks); ``columns`` pivots rows into the dict of columns that Braket's ``job.metrics()`` returns.
"""
from __future__ import annotations

import json
import re
import time
from pathlib import Path

MARKER = "Metrics - "
METRIC_TYPES = ("timestamp", "iteration_number")
STATISTICS = ("max", "min")
_ENCODER = json.JSONEncoder(ensure_ascii=False)  # one encoder: json.dumps(..., ensure_ascii=False) builds one a call
_AFTER_MARKER = re.compile(r"Metrics - ([^\n]*)")  # the first marker of a line, and the rest of that line
# A line as ``log_metric`` prints it, "Metrics - timestamp=T; NAME=V;[ iteration_number=I;]", with every
# number in JSON's syntax (its whole part and the rest captured apart).
_NUMBER = r"(-?(?:0|[1-9][0-9]*))((?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?);"
_LOGGED = re.compile(rf"^[^\n]*?Metrics - timestamp={_NUMBER} (?!timestamp=|iteration_number=)([^\s;=]+)={_NUMBER}"
                     rf"(?: iteration_number={_NUMBER})?$", re.M)
_KEYS: dict[str, str] = {}  # metric name -> its JSON key and ": " (names repeat line after line)


def to_json(row: dict) -> str:
    """One ``metrics.jsonl`` line of a row (names kept as written: ``λoss``, not ``\\u03bboss``)."""
    return _ENCODER.encode(row)


def _row(rest: str) -> dict:
    """The ``name=value;`` pairs of the text after a line's marker (see ``parse_line``)."""
    row = {}
    for pair in rest.split(";")[:-1]:  # only pairs closed by ";"
        name, eq, text = pair.partition("=")
        words = name.split()
        if eq and words and words[-1].isprintable():
            try:
                row[words[-1]] = float(text)  # as Braket: every value a float; others dropped
            except ValueError:
                pass
    return row


def parse_line(line: str, *, rank: int | None = None, now: float | None = None) -> dict | None:
    """Return the metric row of a printed line, or None if it is not a metric line.

    After the marker, each ``name=value;`` pair counts: the name is the last word before ``=``, any
    printable characters but ``=`` and ``;`` (``λoss``, ``val/acc``, ``f1@0.5``), the value a number
    (others are dropped, as Braket drops them). A row without a timestamp gets ``now`` (default:
    the time it is read). Rows of rank > 0 carry ``"rank": K`` so they never form rank 0's columns.
    """
    at = line.find(MARKER)
    if at < 0:
        return None
    row = _row(line[at + len(MARKER):])
    if not row:
        return None
    row.setdefault("timestamp", time.time() if now is None else now)
    if rank:
        row["rank"] = rank
    return row


def jsonl(text: str, *, rank: int | None = None) -> str:
    """The ``metrics.jsonl`` text (one row a line, each ending in a newline) of every metric line in
    ``text``, one or more printed lines joined by newlines; the same rows, in the same order, as
    ``parse_line`` line by line, with the time they were read as the timestamp of rows without one.

    A block whose metric lines all look as ``log_metric`` prints them is parsed by one regular
    expression over the whole block, which keeps up with a script printing metrics in a tight loop;
    any other block is parsed line by line.
    """
    count = text.count(MARKER)
    if not count:
        return ""
    first = text.rfind("\n", 0, text.find(MARKER)) + 1
    if _LOGGED.match(text, first):  # the first metric line is a logged one: try them all at once
        found = _LOGGED.findall(text)
        if len(found) == count:  # one match a marker: every metric line is a logged one, one marker each
            fast = _logged_jsonl(found, rank)
            if fast is not None:
                return fast
    now = time.time()
    rows = (parse_line(m.group(0), rank=rank, now=now) for m in _AFTER_MARKER.finditer(text))
    return "".join(to_json(row) + "\n" for row in rows if row is not None)


def _key(name: str) -> str:
    key = _KEYS.get(name)
    if key is None:
        key = _ENCODER.encode(name) + ": "
        if len(_KEYS) < 4096:
            _KEYS[name] = key
    return key


def _whole(text: str) -> str:
    """How json writes the float of a whole number written in JSON's syntax (``4`` -> ``4.0``)."""
    return text + ".0" if len(text) < 16 else repr(float(text))


def _logged_jsonl(found: list[tuple], rank: int | None) -> str | None:
    """``metrics.jsonl`` text of ``_LOGGED`` matches: the rows ``parse_line`` makes of them, each
    number with a fraction or exponent written as printed (JSON reads back the very float that
    ``float`` makes of it), a whole number as a float; None when a name is not printable."""
    keys = {name: _key(name) for name in {f[2] for f in found}}
    if not all(name.isprintable() for name in keys):
        return None
    end = f', "rank": {rank}}}\n' if rank else "}\n"
    return "".join([
        f'{{"timestamp": {t + tf if tf else _whole(t)}, {keys[name]}{v + vf if vf else _whole(v)}'
        + (f', "iteration_number": {i + jf if jf else i + ".0" if len(i) < 16 else _whole(i)}' if i else "") + end
        for t, tf, name, v, vf, i, jf in found
    ])


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
