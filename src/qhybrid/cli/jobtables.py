"""The job views (``qhybrid.views``) on a terminal: ``jobs list``, ``jobs show`` and ``jobs compare``,
fitted to the console's width.

Columns that matter keep their full text (names, states, instances, times, costs); a listing drops
lower-priority columns before it cuts the result summary, which ends in ``…`` rather than folding
into a narrow column; ``show`` wraps values at spaces; ``compare`` prints the jobs in as many
blocks as the width needs, each with its full job names.
"""
from __future__ import annotations

from qhybrid import views
from qhybrid.cli import output

#: jobs list: (header, row key, priority: lower is dropped last, right-aligned)
LIST_COLUMNS = (("NAME", "name", 0, False), ("STATE", "state", 0, False), ("DEVICE", "device", 5, False),
                ("INSTANCE", "instance", 6, False), ("STARTED", "started_short", 4, False),
                ("TIME", "duration", 3, True), ("RESULT", "result", 1, False), ("COST", "cost", 2, True))
RESULT_MIN = 14  # the result summary is never narrower than this (it is cut with …)
RESULT_WANTED = 32  # columns of priority 3 and above are dropped before the result gets less than this
GAP = 2
COMPARE_VALUE = 20  # a compared value wider than this wraps when the jobs need the room


def _width() -> int:
    return max(40, output.out().width)


def state_text(state: str):
    """A state, coloured by the one state table (``views.STATE_COLOURS``)."""
    from rich.text import Text

    return Text(str(state), style=views.terminal_style(state))


def _fit(columns: list[tuple], widths: dict, total: int) -> list[tuple]:
    """The columns kept: those of priority 2 and above dropped, least important first, until the
    others fit ``total`` with the result column at ``RESULT_WANTED`` (or its full width if less)."""
    kept = list(columns)
    result = min(widths["RESULT"], RESULT_WANTED)

    def need(cols, result_width):
        return sum(result_width if c[0] == "RESULT" else widths[c[0]] for c in cols) + GAP * (len(cols) - 1)

    while any(c[2] > 2 for c in kept) and need(kept, result) > total:
        kept.remove(max(kept, key=lambda c: c[2]))
    while any(c[2] > 1 for c in kept) and need(kept, RESULT_MIN) > total:
        kept.remove(max(kept, key=lambda c: c[2]))
    return kept


def list_table(rows: list[dict]) -> None:
    """``jobs list``: one line per job, the columns that fit the width (NAME, STATE, RESULT first)."""
    from rich import box
    from rich.table import Table

    for r in rows:
        r["started_short"] = views.short_time(r["started"] or r["created"])
    widths = {h: max([len(h)] + [len(str(r[k] or "")) for r in rows]) for h, k, _p, _r in LIST_COLUMNS}
    total = _width()
    kept = _fit(list(LIST_COLUMNS), widths, total)
    fixed = sum(widths[h] for h, *_ in kept if h != "RESULT") + GAP * (len(kept) - 1)
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold", expand=False,
              padding=(0, GAP - 1, 0, 0))
    for head, _key, _prio, right in kept:
        room = max(RESULT_MIN, min(widths[head], total - fixed)) if head == "RESULT" else widths[head]
        t.add_column(head, justify="right" if right else "left", no_wrap=True, overflow="ellipsis",
                     width=room if head == "RESULT" else None, min_width=widths[head] if head != "RESULT" else None)
    for r in rows:
        t.add_row(*[state_text(r["state"]) if h == "STATE" else str(r[k] or "") for h, k, _p, _r in kept])
    output.out().print(t)


def detail_pairs(d: dict) -> list[tuple[str, object]]:
    """``jobs show``'s lines of a ``views.job_detail``."""
    from qhybrid.estimate.render import predicted_line

    state = state_text(d["state"])
    if d.get("phase"):  # RUNNING (installing requirements)
        state.plain = f"RUNNING ({d['phase']})"
    rows: list[tuple[str, object]] = [("name", d["name"]), ("state", state)]
    rows += [("result", d["result"])] if d["result"] else []
    rows += [("device", d["device_arn"]), ("entry_point", d["entry_point"]),
             ("instance", f"{d['instance_count']} x {d['instance']}")]
    if d["distribution"]:
        rows.append(("distribution", f"{d['distribution']} (world size {d['world_size']})"))
    rows += [("created", d["created"]), ("started", d["started"]), ("ended", d["ended"]),
             ("duration", d["duration"])]
    rows.append(("hyperparameters", "  ".join(f"{k}={v}" for k, v in d["hyperparameters"].items())))
    if d["tags"]:
        rows.append(("tags", "  ".join(f"{k}={v}" for k, v in d["tags"].items())))
    rows.append(("cost", d["cost_view"]["text"]))
    if d.get("limits"):
        rows.append(("limits", d["limits"]))
    if d["elsewhere"]:
        rows.append(("elsewhere", d["elsewhere"]))
    predicted = predicted_line({**d, "measured_seconds": d["measured_seconds"]})
    if predicted:
        rows.append(("estimate", predicted))
    if d["checkpoints"]:
        rows.append(("checkpoints", ", ".join(c["name"] for c in d["checkpoints"])))
    env = d["environment"]
    if env:
        pk = env.get("packages", {})
        rows.append(("environment", ", ".join(f"{k} {v}" for k, v in pk.items() if v)))
        rows.append(("host", f"{env.get('host')}, {env.get('cpu')} ({env.get('cpu_count')} cores)"
                             + (f", GPUs: {'; '.join(env['gpus'])}" if env.get("gpus") else ", no GPU")))
        if env.get("git_commit") or env.get("source_git_commit"):
            rows.append(("git", f"qhybrid {env.get('git_commit') or '-'}, source {env.get('source_git_commit') or '-'}"))
        rows.append(("command line", " ".join(env.get("command_line") or [])))
    if d["damaged"]:
        rows.append(("damaged", d["damaged"]))
    else:
        rows.append(("dependencies", d["dependency_environment"] or "the caller's interpreter"))
    if d["failure_reason"]:
        rows.append(("failure_reason", d["failure_reason"]))
    rows.append(("folder", d["folder"]))
    return rows


def show(d: dict) -> None:
    """``jobs show``: key / value lines, values wrapped at spaces within the width (continuations
    indented under the value; a longer word, such as a path, kept whole), then the traceback."""
    import textwrap

    console = output.out()
    rows = detail_pairs(d)
    key_width = max(len(k) for k, _v in rows)
    room = max(20, _width() - key_width - 2)
    for key, value in rows:
        console.print(f"[bold]{key:<{key_width}}[/bold]  ", end="")
        if hasattr(value, "__rich_console__"):
            console.print(value)
            continue
        # a word longer than the room (a path, a job name) stays whole, on a line of its own: copyable
        lines = textwrap.wrap(output.fmt(value), room, break_on_hyphens=False, break_long_words=False) or [""]
        console.print(("\n" + " " * (key_width + 2)).join(lines), markup=False, highlight=False, soft_wrap=True)
    if d["traceback_tail"]:
        console.print(d["traceback_tail"], markup=False, highlight=False)


def compare(heads: list[str], rows: list[list]) -> None:
    """``jobs compare``: fields down, jobs across, in as many blocks of jobs as the width needs; job
    names and field names whole, long values wrapped at spaces within their column."""
    from rich import box
    from rich.table import Table

    cells = [[r[0], *[output.fmt(v, 5) for v in r[1:]]] for r in rows]
    label = max([len(c[0]) for c in cells] + [1])
    total = _width()
    blocks, block, used = [], [], label
    for j in range(1, len(heads)):
        natural = max(len(c[j]) for c in cells) if cells else 0
        w = max(len(heads[j]), min(natural, COMPARE_VALUE))
        if block and used + GAP + w > total:
            blocks.append(block)
            block, used = [], label
        block.append(j)
        used += GAP + w
    blocks.append(block)
    for n, block in enumerate(blocks):
        t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold", expand=False,
                  padding=(0, GAP - 1, 0, 0))
        t.add_column("", no_wrap=True, overflow="ellipsis", min_width=min(label, total - COMPARE_VALUE - GAP),
                     max_width=max(12, total - COMPARE_VALUE - GAP))
        for j in block:
            t.add_column(heads[j], overflow="fold", min_width=len(heads[j]))
        for c in cells:
            t.add_row(c[0], *[c[j] for j in block])
        if n:
            output.out().print()
        output.out().print(t)
