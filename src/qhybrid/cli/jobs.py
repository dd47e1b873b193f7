"""``qhybrid jobs ...``: list, show, logs, metrics (tables and plots), result, wait, compare, cancel, export, rm.

Each command is a module-level function (``COMMANDS``: name -> function); ``register`` adds them.

``submit_and_wait`` (for commands that submit a job) lives in ``qhybrid.cli.workload`` and is
re-exported here.
"""
from __future__ import annotations

import time
from typing import Annotated, Literal, Optional

import typer

from qhybrid.cli import options, output
from qhybrid.cli.workload import submit_and_wait

STATES = Literal["QUEUED", "RUNNING", "COMPLETED", "FAILED", "CANCELLED"]
Names = Annotated[list[str], typer.Argument(metavar="NAME...", help="Job names (see: qhybrid jobs list).")]


def _jobs(names: list[str]):
    from qhybrid.submit import Job

    return [Job.get(n) for n in names]


def list_(state: Annotated[Optional[STATES], typer.Option(case_sensitive=False, help="Only jobs in this state.")] = None,
          limit: Annotated[int, typer.Option("--limit", "-n", help="Newest N jobs (0: all).")] = 20,
          tag: Annotated[Optional[list[str]], typer.Option(
              "--tag", metavar="KEY=VALUE", help="Only jobs with this tag (repeatable; all must match).")] = None,
          json_: options.Json = False) -> None:
    """Jobs, newest first: state, result (a failed job's reason), cost, time, start, device, instance."""
    from qhybrid import views
    from qhybrid.cli import jobtables
    from qhybrid.cli.run import pairs
    from qhybrid.submit import Job

    tags = pairs(tag, "--tag") or None
    found = list(reversed(Job.list(state=state.upper() if state else None, tags=tags)))
    shown = found[:limit] if limit > 0 else found
    infos = [(j, views.with_phase(j.describe())) for j in shown]
    rows = [views.job_row(j, i) for j, i in infos]
    if json_:
        output.print_json([{**i, "key_metric": r["result"], "row": r} for (_j, i), r in zip(infos, rows)])
        return
    if not rows:
        output.note("no jobs")
        return
    jobtables.list_table(rows)
    if len(found) > len(shown):
        output.note(f"{len(found) - len(shown)} older jobs not shown (--limit 0 shows all)")
    for _, i in infos:
        if i.get("damaged"):
            output.note(f"qhybrid: {i['damaged']}")


def show(name: options.JobName, json_: options.Json = False) -> None:
    """A job: state, result, device, times, hyperparameters, cost, estimate, environment, failure."""
    from qhybrid import views
    from qhybrid.cli import jobtables
    from qhybrid.submit import Job

    job = Job.get(name)
    if json_:
        from qhybrid.jobs import environment

        info = views.with_phase(job.describe())
        # describe()'s "environment" is the job's dependency environment; here it is environment.json
        output.print_json({**info, "environment": environment.read(job.folder),
                           "dependency_environment": info["environment"]})
        return
    jobtables.show(views.job_detail(job))


def logs(name: options.JobName,
         follow: Annotated[bool, typer.Option("--follow", "-f", help="Follow until the job ends; exit 0 only if it COMPLETED.")] = False) -> None:
    """A job's log (stdout and stderr of all its processes)."""
    import sys

    from qhybrid.submit import Job

    job = Job.get(name)
    if not follow:
        sys.stdout.write(job.logs())
        return
    job.wait(stream=lambda line: print(line, flush=True))
    state = job.state()
    if state != "COMPLETED":
        output.note(f"qhybrid: job {name} {state}: {job.describe()['failure_reason']}")
        raise typer.Exit(1)


def metrics(names: Names,
            plot: Annotated[Optional[str], typer.Option(metavar="FILE.png",
                            help="Also plot the metrics to FILE (several jobs overlaid).")] = None,
            metric_type: Annotated[Optional[Literal["timestamp", "iteration_number"]], typer.Option(
                case_sensitive=False, help="Rows keyed by (default: iteration_number when logged).")] = None,
            statistic: Annotated[Literal["max", "min"], typer.Option(
                case_sensitive=False, help="Which value a metric logged twice in a row keeps.")] = "max",
            rank: Annotated[int, typer.Option(help="The rank whose metrics to show.")] = 0,
            json_: options.Json = False) -> None:
    """A job's metrics, one row per iteration (with the time since the first); --plot draws them."""
    from qhybrid.cli.results import SHORT, metric_columns
    from qhybrid.cli.results import plot as draw

    if plot:
        output.writable_path(plot, option="--plot")  # before any work: one line, not a traceback
    found = _jobs(names)
    tables = {j.name: metric_columns(j, metric_type=metric_type, statistic=statistic, rank=rank) for j in found}
    if plot:
        draw(found, plot)
        output.note(f"wrote {plot}")
    if json_:
        output.print_json(tables[found[0].name] if len(found) == 1 else tables)
        return
    for job_name, cols in tables.items():
        if not cols:
            output.note(f"{job_name}: no metrics")
            continue
        heads = list(cols)
        shown = [SHORT.get(h, h) for h in heads]
        output.table(shown, [[output.fmt(cols[h][i], 4) for h in heads] for i in range(len(cols[heads[0]]))],
                     title=job_name if len(tables) > 1 else None, right=tuple(shown))


def result(name: options.JobName,
           timeout: Annotated[Optional[float], typer.Option(help="Seconds to wait at most.")] = None,
           allow_pickle: options.AllowPickle = False,
           json_: options.Json = False) -> None:
    """Wait for a job and print its result (JSON)."""
    from qhybrid.submit import Job

    output.print_json(Job.get(name).result(timeout=timeout, allow_pickle=allow_pickle))


def wait(names: Names,
         timeout: Annotated[Optional[float], typer.Option(help="Seconds to wait at most (for all together).")] = None,
         json_: options.Json = False) -> None:
    """Wait for jobs to end; exit 0 when all COMPLETED, else 1."""
    found = _jobs(names)
    deadline = None if timeout is None else time.monotonic() + timeout
    states = {}
    for job in found:
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            job.wait(timeout=left)
        except Exception as err:  # JobError: still running at the deadline
            from qhybrid.errors import JobError

            if not isinstance(err, JobError):
                raise
        states[job.name] = job.state()
    if json_:
        output.print_json(states)
    else:
        from qhybrid.cli.jobtables import state_text

        output.table(["NAME", "STATE"], [[n, state_text(s)] for n, s in states.items()], no_wrap=("NAME", "STATE"))
    if any(s != "COMPLETED" for s in states.values()):
        raise typer.Exit(1)


def compare(names: Names,
            all_: Annotated[bool, typer.Option("--all", help="Also the hyperparameters all jobs share.")] = False,
            json_: options.Json = False) -> None:
    """Jobs side by side: the hyperparameters they differ in, answers, final and best metrics, bill."""
    from qhybrid.cli.results import compare as side_by_side

    from qhybrid.cli import jobtables

    heads, rows = side_by_side(_jobs(names), everything=all_ or json_)
    if json_:
        output.print_json({row[0]: dict(zip(heads[1:], row[1:])) for row in rows})
        return
    jobtables.compare(heads, rows)


def cancel(name: options.JobName, json_: options.Json = False) -> None:
    """End a job's whole process tree."""
    from qhybrid.submit import Job

    state = Job.get(name).cancel()
    if json_:
        output.print_json({"job": name, "state": state})
    else:
        print(f"{name} {state}")


def export(names: Annotated[Optional[list[str]], typer.Argument(
               metavar="NAME...", help="Jobs to export (default: every job).")] = None,
           mlflow: Annotated[str, typer.Option(
               "--mlflow", metavar="URI",
               help="MLflow tracking URI: sqlite:///PATH/mlflow.db, http://HOST:5000, ...")] = ...,
           experiment: Annotated[str, typer.Option(help="MLflow experiment the runs go to.")] = "qhybrid",
           follow: Annotated[bool, typer.Option(
               "--follow", help="Log a running job's metrics live, until it ends.")] = False,
           json_: options.Json = False) -> None:
    """Write jobs as MLflow runs: params, metrics by iteration, tags, result and cost, logs and results."""
    from qhybrid.mlflow_export import export as to_mlflow

    runs = to_mlflow(list(names or []), uri=mlflow, experiment=experiment, follow=follow)
    if json_:
        output.print_json({"tracking_uri": mlflow, "experiment": experiment, "runs": runs})
        return
    for job_name, run_id in runs.items():
        print(f"{job_name} -> run {run_id}")
    output.note(f"{len(runs)} job(s) exported to experiment {experiment!r} at {mlflow}")


def repair(json_: options.Json = False) -> None:
    """Rebuild an unreadable index from the job folders, add jobs missing from it, remove half-made submissions."""
    from qhybrid.jobs import store

    done = store.repair()
    if json_:
        output.print_json(done)
        return
    print(f"index {'rebuilt from the job folders' if done['index_rebuilt'] else 'sound'}; "
          f"{done['rows_added']} job(s) added from their folders; "
          f"{done['stale_submissions_removed']} half-made submission(s) removed")
    for job_name in done["jobs_without_folder"]:
        print(f"job {job_name} has no folder (remove it with: qhybrid jobs rm {job_name})")


def rm(names: Names) -> None:
    """Remove finished jobs from the store (and their folders)."""
    for job in _jobs(names):
        job.delete()
        output.note(f"removed {job.name}")


COMMANDS = {"list": list_, "show": show, "logs": logs, "metrics": metrics, "result": result, "wait": wait,
            "compare": compare, "cancel": cancel, "export": export, "repair": repair, "rm": rm}


def register(app: typer.Typer) -> None:
    """Add the ``jobs`` group: the commands of ``COMMANDS``."""
    jobs = typer.Typer(name="jobs", no_args_is_help=True, help="List, inspect, compare and wait for jobs.")
    app.add_typer(jobs)
    for name, command in COMMANDS.items():
        jobs.command(name)(command)


__all__ = ["register", "submit_and_wait"]
