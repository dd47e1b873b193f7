"""What the commands that submit a job share (``run``, ``qaoa``, ``qml``): ``submit_and_wait``, the
live progress made from the job's metric lines, the result and cost at the end."""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from qhybrid import views
from qhybrid.cli import output
from qhybrid.jobs.script import STARTED_MARK

METRIC = re.compile(r"(\w+)=([-+0-9.eE]+|nan|inf);")
COMPILE_AFTER_S = 1.0  # no first iteration after this long: say what the job is doing
STILL_EVERY_S = 15.0  # and again every this long, piped (a live bar shows its elapsed time)
KERNEL_LOOK_S = 2.0  # how often numba's kernel cache is counted while waiting
TERMINAL = ("COMPLETED", "FAILED", "CANCELLED")
#: How a submitted job's supervisor starts (``Job.create(launch=...)``): ``main()``, run as the
#: ``qhybrid`` process itself, sets ``"fork"`` (one interpreter start-up fewer); "exec" otherwise.
LAUNCH = "exec"


@dataclass(frozen=True)
class ProgressSpec:
    """What the progress display shows of a job's metric lines.

    Attributes:
        total: iterations expected (None: unknown, e.g. QAOA run to convergence).
        show: metric names shown live, in order, with a format each (``{"energy": "energy {:.4f}"}``).
        unit: ``iteration`` or ``epoch``.
        first: the ``iteration_number`` of the first iteration (0 for QAOA, 1 for epochs).
    """

    total: int | None = None
    show: dict = field(default_factory=dict)
    unit: str = "iteration"
    first: int = 0


class Display:
    """Turns log lines into progress: a Rich bar with ETA and live metrics on a terminal, else one
    plain line per iteration on stderr. Other lines pass through; other ranks' metrics are dropped.

    Every wait past ``COMPILE_AFTER_S`` before the first iteration is named (``_phase``): building
    the job's dependency environment, compiling kernels (numba's cache growing), running its first
    iteration (once the job says so: ``jobs.script.say_started``), or loading the engine and its cached kernels;
    piped, a line at each change and every ``STILL_EVERY_S``.
    """

    def __init__(self, name: str, spec: ProgressSpec, *, live: bool | None = None):
        self.name, self.spec = name, spec
        console = output.err()
        self.live = (console.is_terminal or console.is_jupyter) if live is None else live  # Rich renders both
        self.t0 = time.monotonic()
        self.running_since: float | None = None
        self.first_metric: float | None = None
        self.compile_noted = False
        self.phase: str | None = None  # what the job is doing before its first iteration
        self.phase_said = (None, 0.0)  # the phase last printed, and when
        self.building = False  # the job's log says it is building its dependency environment
        self.started: str | None = None  # the job's log says its first iteration started: that, in words
        self.kernels: int | None = None  # numba's cached kernel files when we started looking
        self.kernels_new = 0
        self.kernels_looked = 0.0
        self.iteration: int | None = None
        self.values: dict[str, float] = {}
        self.paths: tuple[str, str] | None = None  # (the job's copy of its source, the path the user gave)
        self.bar = self.task = None
        if self.live:
            self._start_bar()

    def _start_bar(self) -> None:
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn)
        from rich.table import Column

        def fixed(width: int) -> Column:
            return Column(no_wrap=True, min_width=width)

        spec = self.spec
        if spec.total:
            bar = 10 if output.err().width < 100 else 20
            columns = [BarColumn(bar_width=bar, table_column=fixed(bar)),
                       MofNCompleteColumn(table_column=fixed(2 * len(str(spec.total)) + 1)),
                       TimeElapsedColumn(table_column=fixed(7)), TextColumn("ETA", table_column=fixed(3)),
                       TimeRemainingColumn(table_column=fixed(7))]
        else:  # run to convergence: no bar to fill, no ETA to promise
            columns = [TextColumn(f"{{task.completed:.0f}} {spec.unit}s", table_column=fixed(6 + len(spec.unit))),
                       TimeElapsedColumn(table_column=fixed(7))]
        used = sum(c.get_table_column().min_width or 0 for c in columns) + 1 + 9 + len(columns) + 2
        self.metrics_room = max(8, output.err().width - used)
        self.bar = Progress(SpinnerColumn(table_column=fixed(1)), TextColumn("{task.description}", table_column=fixed(9)),
                            *columns, TextColumn("{task.fields[metrics]}", table_column=Column(no_wrap=True)),
                            console=output.err(), transient=True, refresh_per_second=8)
        self.task = self.bar.add_task("queued", total=spec.total, metrics="")
        self.bar.start()

    # -- input -----------------------------------------------------------------
    def line(self, text: str) -> None:
        """One log line of the job."""
        if "Metrics -" not in text:
            if text.startswith(STARTED_MARK):
                self.started = text[len(STARTED_MARK):].strip()
                return
            if text.startswith("qhybrid: building environment"):
                self.building = True
            elif text.startswith("qhybrid: using environment") or text.startswith("qhybrid: environment"):
                self.building = False
            if text.startswith("qhybrid: job ") and self.values and not self.spec.show:
                self._iteration_done()  # the job's end: its last metrics first
            self._print(text)
            return
        if "rank=" in text:
            return
        found = dict(METRIC.findall(text))
        it = found.pop("iteration_number", None)
        found.pop("timestamp", None)
        if self.first_metric is None:
            self.first_metric = time.monotonic()
            if self.compile_noted:
                self._print(f"first {self.spec.unit} after {self.first_metric - (self.running_since or self.t0):.1f} s",
                            ours=True)
        if it is not None and self.iteration is not None and int(float(it)) != self.iteration:
            if self.values and not self.spec.show:  # showing whatever is logged: that iteration is complete
                self._iteration_done()
            self.values = {}
        if it is not None:
            self.iteration = int(float(it))
        self.values.update({k: float(v) for k, v in found.items()})
        if self.spec.show and all(k in self.values for k in self.spec.show):
            self._iteration_done()
        elif not self.spec.show and it is None:  # metrics without iteration numbers: one line each
            self._iteration_done()

    def poll(self, state: str) -> None:
        """The job's state at each look."""
        now = time.monotonic()
        if self.kernels is None:
            self.kernels = self._kernel_files()
        if state == "RUNNING" and self.running_since is None:
            self.running_since = now
        waiting = state == "RUNNING" and self.first_metric is None and now - self.running_since > COMPILE_AFTER_S
        if waiting:
            self.compile_noted = True
            self.phase = self._phase(now)
            said, when = self.phase_said
            if self.phase != said or now - when > STILL_EVERY_S:
                if self.bar is None or self.phase != said:
                    self._print(self.phase + " ..." if self.phase != said else
                                f"still {self.phase} after {now - self.running_since:.0f} s ...", ours=True)
                self.phase_said = (self.phase, now)
        if self.bar is not None and state not in TERMINAL:
            desc = state.lower() if self.first_metric is None and not self.compile_noted else "running"
            if self.first_metric is None and self.compile_noted:
                desc = self.phase.split(" ", 1)[0]  # building / compiling / training / loading
            self.bar.update(self.task, description=desc)

    def _kernel_files(self) -> int:
        from qhybrid.jobs.environment import kernel_cache

        return kernel_cache()["files"]

    def _phase(self, now: float) -> str:
        """What the job does before its first iteration, in words."""
        if self.building:
            return "building the job's dependency environment (pip; once per requirements)"
        if now - self.kernels_looked > KERNEL_LOOK_S:  # numba writes each compiled kernel to its cache
            self.kernels_looked = now
            self.kernels_new = max(0, self._kernel_files() - (self.kernels or 0))
        if self.kernels_new or not self.kernels:
            done = f", {self.kernels_new} so far" if self.kernels_new else ""
            return f"compiling kernels for this circuit (once; cached for later runs{done})"
        return self.started or "loading the engine and its cached kernels"

    def close(self) -> None:
        """Show the last iteration still pending, stop the live display."""
        if self.values and not self.spec.show:
            self._iteration_done()
        if self.bar is not None:
            self.bar.stop()
            self.bar = None

    # -- output ----------------------------------------------------------------
    def _metrics_text(self) -> str:
        if not self.spec.show:
            return "  ".join(f"{k} {output.fmt(v, 4)}" for k, v in self.values.items())
        parts = []
        for key, form in self.spec.show.items():
            if key in self.values:
                parts.append(form.format(self.values[key]))
        return "  ".join(parts)

    def _iteration_done(self) -> None:
        if self.iteration is None:  # no iteration numbers: a line per metric
            if self.bar is None:
                output.note(self._metrics_text(), indent="  ")
            else:
                self.bar.update(self.task, description="running", metrics=self._metrics_text())
            self.values = {}
            return
        done = self.iteration - self.spec.first + 1
        if self.bar is not None:
            text = self._metrics_text()
            if len(text) > self.metrics_room:  # the times stay whole; the metrics give way
                text = text[:self.metrics_room - 1] + "…"
            self.bar.update(self.task, completed=done, description="running", metrics=text)
            if not self.spec.show:  # a script's own metrics: each iteration stays on screen, as piped
                self._print(f"{self.spec.unit} {done}  {self._metrics_text()}", ours=True)
        else:
            total = f"/{self.spec.total}" if self.spec.total else ""
            output.note(f"{self.spec.unit} {done}{total}  {self._metrics_text()}", indent="  ")
        self.values = {}

    def _print(self, text: str, *, ours: bool = False) -> None:
        """A line on stderr, above the bar when there is one: ours (phases, our status lines) wrapped
        at words to the width, piped too; the job's own lines as they are."""
        if self.paths is not None:
            text = text.replace(*self.paths)
        if ours or text.startswith("qhybrid: "):
            text = output.wrapped(text)
        if self.bar is not None:
            self.bar.console.print(text, markup=False, highlight=False)
        else:
            output.note(text)


def _cost_line(info: dict, *, sep: str = "; ") -> str:
    """``cost: $X (billed S s x N TYPE)``, then ``sep`` and what the same run costs elsewhere."""
    from qhybrid.jobs.instances import format_usd

    approximate = info.get("price_kind") == "approximate"
    text = (f"cost: {format_usd(info['estimated_cost_usd'], approximate)} "
            f"(billed {info['billed_seconds']:g} s x {info['instance_count']} {info['instance_type']})")
    elsewhere = views.elsewhere(info)
    if elsewhere:
        text += sep + elsewhere
    return text


def json_document(job, info: dict, result) -> dict:
    """The ``--json`` document of a submitted job: name, state, result, bill, cost, failure."""
    return {"job": job.name, "state": info["state"], "result": result, "billed_seconds": info["billed_seconds"],
            "instance_type": info["instance_type"], "instance_count": info["instance_count"],
            "cost_usd": info["estimated_cost_usd"], "cost_on_other_instances_usd": info["cost_on_other_instances_usd"],
            "failure_reason": info["failure_reason"]}


def _source_paths(job, source) -> tuple[str, str] | None:
    """``(the job's copy of source, source as the user gave it)``: tracebacks name the user's file."""
    from pathlib import Path

    from qhybrid.jobs import contract

    if not isinstance(source, (str, Path)):
        return None
    return str(job.folder / contract.SOURCE_DIR / Path(source).name), str(source)


def submit_and_wait(job_kwargs: dict, *, json_output: bool = False, progress: ProgressSpec | None = None,
                    show=None, wait: bool = True, quiet: bool = False, allow_pickle: bool = False) -> int:
    """Submit a job, show its progress while waiting, print its result and cost; return an exit status.

    Args:
        job_kwargs: keyword arguments of ``Job.create``.
        json_output: print one JSON document on stdout (``json_document``) instead of text.
        progress: what the live display shows (default: the job's log lines on stderr).
        show: ``show(result) -> None`` prints a completed job's result as text (default: JSON).
        wait: False to return right after submitting (prints the job name).
        quiet: no progress display, no log lines.
        allow_pickle: load a pickled results.json (runs code from the file); refused otherwise.

    Returns:
        0 when the job COMPLETED (or was submitted with ``wait=False``), else 1.

    Raises:
        SpecError, InstanceError, DeviceError: bad input (the CLI prints them in one line).
    """
    from qhybrid.submit import Job

    job = Job.create(**{"launch": LAUNCH, **job_kwargs})
    if not wait:
        if json_output:
            output.print_json({"job": job.name, "state": job.state()})
        else:
            print(job.name)
        return 0
    if not quiet:
        output.note(f"qhybrid: submitted {job.name}")
    display = None if quiet else Display(job.name, progress or ProgressSpec(show={}))
    paths = _source_paths(job, job_kwargs.get("source_module"))
    if display is not None:
        display.paths = paths
    try:
        if display is None:
            job.wait()
        else:
            job.wait(stream=display.line, on_poll=display.poll)
    except KeyboardInterrupt:
        if display:
            display.close()
        output.note(f"qhybrid: stopped waiting; {job.name} keeps running "
                    f"(follow: qhybrid jobs logs -f {job.name}; stop: qhybrid jobs cancel {job.name})", indent="  ")
        return 130
    finally:
        if display:
            display.close()
    info = job.describe()
    result = job.result(allow_pickle=allow_pickle) if info["state"] == "COMPLETED" else None
    if json_output:
        output.print_json(json_document(job, info, result))
    elif result is not None:
        (show or output.print_json)(result)
        output.note(_cost_line(info, sep="\n      "), indent="      ")
    if info["state"] != "COMPLETED":
        output.note(f"qhybrid: error: job {job.name} {info['state']}: {info['failure_reason']}")  # one line
        if info["traceback_tail"] and not json_output and display is None:  # else it was in the log shown
            output.note(info["traceback_tail"].replace(*paths) if paths else info["traceback_tail"])
        return 1
    return 0


def exit_with(status: int) -> None:
    """End a command with ``status`` (Typer's way)."""
    import typer

    if status:
        raise typer.Exit(status)


__all__ = ["ProgressSpec", "Display", "submit_and_wait", "json_document", "exit_with"]
