"""How the CLI prints: data on stdout (a Rich table, or one JSON document with ``--json``), all
else on stderr; colour only on a terminal without ``NO_COLOR``; tables fit the terminal's width."""
from __future__ import annotations

import json
import math
import os
import sys
from functools import lru_cache

STATE_STYLES = {"COMPLETED": "green", "FAILED": "bold red", "CANCELLED": "yellow", "RUNNING": "cyan",
                "QUEUED": "blue", "DAMAGED": "magenta", "INSTALLING": "cyan"}


def _colour(stream) -> bool:
    return stream.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


@lru_cache(maxsize=None)
def _console(fd: int, stream_id: int):
    from rich.console import Console

    stream = sys.stdout if fd == 1 else sys.stderr
    colour = _colour(stream)
    return Console(file=stream, no_color=not colour, highlight=False, soft_wrap=True,
                   color_system="auto" if colour else None, emoji=False)


def out():
    """The Rich console on stdout (data)."""
    return _console(1, id(sys.stdout))


def err():
    """The Rich console on stderr (progress, notes, errors)."""
    return _console(2, id(sys.stderr))


def note(text: str) -> None:
    """One line on stderr, printed as is (no markup)."""
    err().print(text, markup=False, highlight=False)


def jsonable(value):
    """``value`` with what JSON cannot hold (tuples, numpy scalars, NaN) made JSON-safe."""
    def fix(v):
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, dict):
            return {str(k): fix(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [fix(x) for x in v]
        return v

    return fix(json.loads(json.dumps(value, default=lambda o: o.item() if hasattr(o, "item") else repr(o))))


def print_json(doc) -> None:
    """Exactly one JSON document on stdout."""
    sys.stdout.write(json.dumps(jsonable(doc), indent=2) + "\n")
    sys.stdout.flush()


def state_text(state: str):
    """A job state, coloured on a terminal."""
    from rich.text import Text

    return Text(state, style=STATE_STYLES.get(state, ""))


def table(columns: list[str], rows: list[list], *, title: str | None = None, right: tuple[str, ...] = (),
          no_wrap: tuple[str, ...] = (), gap: int = 2) -> None:
    """Print a table on stdout that fits the console's width (long cells fold).

    Args:
        columns: headers.
        rows: cells (str, numbers, or Rich renderables such as ``state_text``).
        right: headers of right-aligned (numeric) columns.
        no_wrap: headers of columns never folded (they keep their width; others give way).
        gap: spaces between columns.
    """
    from rich import box
    from rich.table import Table

    t = Table(title=title, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold",
              title_justify="left", expand=False, padding=(0, max(0, gap - 1), 0, 0))
    for name in columns:
        t.add_column(name, justify="right" if name in right else "left", overflow="fold",
                     no_wrap=name in no_wrap)
    for row in rows:
        t.add_row(*[c if hasattr(c, "__rich_console__") or hasattr(c, "__rich__") else fmt(c) for c in row])
    out().print(t)


def fmt(value, digits: int = 6) -> str:
    """A cell: '' for None, floats to ``digits`` significant digits, else ``str``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.{digits}g}"
    return str(value)


def pairs(rows: list[tuple[str, object]]) -> None:
    """Key / value lines on stdout, the keys aligned."""
    width = max((len(k) for k, _ in rows), default=0)
    console = out()
    for key, value in rows:
        console.print(f"[bold]{key:<{width}}[/bold]  ", end="")
        console.print(value if hasattr(value, "__rich_console__") else fmt(value), markup=False, highlight=False)
