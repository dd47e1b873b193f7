"""How the CLI prints: data on stdout (a Rich table, or one JSON document with ``--json``), all
else on stderr; colour only on a terminal without ``NO_COLOR``; tables fit the terminal's width.

Piped output is laid out for the terminal it would have had (``width``): ``$COLUMNS``, else the
width of whichever of stdout, stderr and stdin is a terminal, else 80 columns; never wider, with
columns that matter kept whole and the others left out by priority (``table(drop=...)``)."""
from __future__ import annotations

import json
import os
import sys
from functools import lru_cache

from qhybrid.views import STATE_COLOURS, json_safe

STATE_STYLES = {state: styles[0] for state, styles in STATE_COLOURS.items()}  # the one state table


def _colour(stream) -> bool:
    return stream.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def width() -> int:
    """The columns output is laid out for: ``$COLUMNS`` when set, else the terminal's width (stdout's,
    or stderr's or stdin's when stdout is piped: the width it would have had), else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
        if columns > 0:
            return columns
    except ValueError:
        pass
    for fd in (1, 2, 0):
        try:
            if os.isatty(fd):
                return os.get_terminal_size(fd).columns or 80
        except (OSError, ValueError):
            continue
    return 80


@lru_cache(maxsize=None)
def _console(fd: int, stream_id: int):
    from rich.console import Console

    stream = sys.stdout if fd == 1 else sys.stderr
    colour = _colour(stream)
    terminal = stream.isatty()
    return Console(file=stream, no_color=not colour, highlight=False, soft_wrap=True,
                   color_system="auto" if colour else None, emoji=False, width=None if terminal else width())


def out():
    """The Rich console on stdout (data)."""
    return _console(1, id(sys.stdout))


def err():
    """The Rich console on stderr (progress, notes, errors)."""
    return _console(2, id(sys.stderr))


def note(text: str, *, indent: str | None = None) -> None:
    """A message on stderr (no markup): as is, or with ``indent`` wrapped at words to the width,
    later lines indented (``wrapped``): on a terminal and piped alike, never wider than ``width()``
    but for a single word longer than that (a path, a URL)."""
    err().print(text if indent is None else wrapped(text, indent=indent), markup=False, highlight=False)


def show(renderable, *, console=None, **kwargs) -> None:
    """Print ``renderable`` on ``console`` (default stdout's); piped, without the trailing spaces
    that Rich pads lines with."""
    console = console or out()
    if console.is_terminal or console.is_jupyter:
        console.print(renderable, **kwargs)
        return
    with console.capture() as captured:
        console.print(renderable, **kwargs)
    console.file.write("".join(line.rstrip() + "\n" for line in captured.get().splitlines()))
    console.file.flush()


def para(text: str, *, style: str | None = None, console=None) -> None:
    """``text`` on stdout (or ``console``), wrapped at words to the console's width (no markup)."""
    show(text, console=console, markup=False, highlight=False, soft_wrap=False, style=style)


def jsonable(value):
    """``value`` with what JSON cannot hold (tuples, numpy scalars, NaN) made JSON-safe (``views.json_safe``)."""
    return json_safe(value)


def print_json(doc) -> None:
    """Exactly one JSON document on stdout."""
    sys.stdout.write(json.dumps(jsonable(doc), indent=2) + "\n")
    sys.stdout.flush()


def state_text(state: str):
    """A job state, coloured on a terminal."""
    from rich.text import Text

    return Text(state, style=STATE_STYLES.get(state, ""))


def _cell_width(cell) -> int:
    from rich.cells import cell_len

    text = getattr(cell, "plain", None)
    return max((cell_len(line) for line in str(cell if text is None else text).splitlines()), default=0)


def fitted(columns: list[str], rows: list[list], *, limit: int, gap: int = 2, drop: tuple[str, ...] = ()) -> list[str]:
    """The headers kept when the table must be at most ``limit`` columns wide: those of ``drop`` are
    left out, the first first, until every kept column shows its widest cell whole (or none is left
    to drop).

    Example:
        >>> fitted(["A", "B"], [["aaaa", "bbbb"]], limit=6, drop=("B",))
        ['A']
    """
    widest = {h: max([_cell_width(h), *(_cell_width(r[i]) for r in rows)]) for i, h in enumerate(columns)}
    kept = list(columns)
    for name in drop:
        if sum(widest[h] for h in kept) + gap * (len(kept) - 1) <= limit:
            break
        if name in kept:
            kept.remove(name)
    return kept


def table(columns: list[str], rows: list[list], *, title: str | None = None, right: tuple[str, ...] = (),
          no_wrap: tuple[str, ...] = (), gap: int = 2, drop: tuple[str, ...] = (), console=None) -> list[str]:
    """Print a table on stdout that fits the console's width (long cells fold).

    Args:
        columns: headers.
        rows: cells (str, numbers, or Rich renderables such as ``state_text``).
        right: headers of right-aligned (numeric) columns.
        no_wrap: headers of columns never folded (they keep their width; others give way).
        gap: spaces between columns.
        drop: headers of columns that may be left out when the table is too wide, least important
            first (``fitted``); the others fold.
        console: where to print (default stdout's).

    Returns:
        The headers left out (to say so, or to show them otherwise).
    """
    from rich import box
    from rich.table import Table

    console = console or out()
    cells = [[c if hasattr(c, "__rich_console__") or hasattr(c, "__rich__") else fmt(c) for c in row] for row in rows]
    kept = fitted(columns, cells, limit=console.width - gap, gap=gap, drop=drop)  # and the last padding
    t = Table(title=title, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold",
              title_justify="left", expand=False, padding=(0, max(0, gap - 1), 0, 0))
    for name in kept:
        t.add_column(name, justify="right" if name in right else "left", overflow="fold",
                     no_wrap=name in no_wrap)
    index = [columns.index(name) for name in kept]
    for row in cells:
        t.add_row(*[row[i] for i in index])
    show(t, console=console)
    return [h for h in columns if h not in kept]


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


def pairs(rows: list[tuple[str, object]], *, console=None) -> None:
    """Key / value lines on stdout, the keys aligned; a long value wraps at words under itself."""
    from rich.table import Table
    from rich.text import Text

    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True, style="bold")
    grid.add_column(overflow="fold")
    for key, value in rows:
        grid.add_row(Text(key), value if hasattr(value, "__rich_console__") else Text(fmt(value)))
    show(grid, console=console)


def wrapped(text: str, *, indent: str = "  ", console=None) -> str:
    """``text`` wrapped at words to the console's width (stderr's by default; piped, ``width()``),
    later lines indented; a word longer than the width stays whole on a line of its own."""
    import textwrap

    limit = (console or err()).width
    return "\n".join(textwrap.fill(line, width=limit, subsequent_indent=indent, break_long_words=False,
                                    break_on_hyphens=False) for line in text.split("\n"))


def writable_path(given: str, *, option: str) -> str:
    """Check a file the command will write (``--plot m.png``) before any work: its folder exists and
    can be written. Returns ``given``.

    Raises:
        SpecError: one line naming the path as given and what is wrong.
    """
    from pathlib import Path

    from qhybrid.errors import SpecError

    folder = Path(given).expanduser().parent
    if Path(given).expanduser().is_dir():
        raise SpecError(f"{option} {given!r} is a folder; give a file name (e.g. {Path(given) / 'metrics.png'})")
    if not folder.is_dir():
        raise SpecError(f"{option} {given!r}: the folder {str(folder)!r} does not exist (create it first)")
    if not os.access(folder, os.W_OK):
        raise SpecError(f"{option} {given!r}: the folder {str(folder)!r} is not writable")
    return given
