"""``qhybrid estimate``'s table on the terminal: an :class:`~qhybrid.estimate.Estimate` fitted to the
width, instance names, times and costs whole (the estimate itself knows nothing of terminals)."""
from __future__ import annotations

from qhybrid.cli import output
from qhybrid.estimate.render import DROP, heading, rows_as_text


def render(est, *, console=None) -> None:
    """Print the estimate as a table (stdout) with its notes below, fitted to the terminal: instance
    names, seconds, totals and costs whole; the least needed columns left out first (``DROP``)."""
    console = console or output.out()
    output.para(heading(est), console=console)
    head, *body = rows_as_text(est)
    dropped = output.table(head, body, right=("s/iter", "total", "cost"), console=console, gap=2,
                           no_wrap=("target", "device", "s/iter", "total", "cost"), drop=DROP)
    notes = list(est.notes)
    notes += [f"{est.instance_type}: {note}" for note in est.row(est.instance_type).notes]
    if any(r.approximate for r in est.rows):
        notes.append("≈: an approximate price (an older table; see `qhybrid instances`)")
    if dropped:
        notes.append(f"left out to fit {console.width} columns: {', '.join(dropped)} "
                     "(a wider terminal or --json shows them)")
    for note in notes:
        output.para(note, style="dim", console=console)
