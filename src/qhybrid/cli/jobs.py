"""``qhybrid jobs ...``: list, show, logs, metrics (tables and plots), result, wait, compare, cancel, rm.

``submit_and_wait`` (for commands that submit a job) lives in ``qhybrid.cli.workload`` and is
re-exported here.
"""
from __future__ import annotations

import time
from datetime import datetime
from typing import Annotated, Literal, Optional

import typer

from qhybrid.cli import options, output
from qhybrid.cli.workload import submit_and_wait

STATES = Literal["QUEUED", "RUNNING", "COMPLETED", "FAILED", "CANCELLED"]
Names = Annotated[list[str], typer.Argument(metavar="NAME...", help="Job names (see: qhybrid jobs list).")]


def _when(iso: str | None) -> str:
    """A creation time, short: hours and minutes today, else month and day (--json has it all)."""
    if not iso:
        return ""
    t = datetime.fromisoformat(iso).astimezone()
    return t.strftime("%H:%M") if t.date() == datetime.now().astimezone().date() else t.strftime("%b %d")


def _cost(value) -> str:
    from qhybrid.jobs.instances import format_usd

    return "?" if value is None else format_usd(value)


def _jobs(names: list[str]):
    from qhybrid.jobs import Job

    return [Job.get(n) for n in names]


def _with_phase(info: dict) -> dict:
    """``describe()`` plus ``phase``: what a RUNNING job is doing before its script (``installing
    requirements``), else None."""
    from qhybrid.jobs import store

    try:
        phase = store.get(info["name"]).get("phase") if str(info["state"]) == "RUNNING" else None
    except Exception:  # noqa: BLE001 - a job removed meanwhile: no phase
        phase = None
    return {**info, "phase": phase}


def _shown_state(info: dict) -> str:
    """The STATE cell: the state, or INSTALLING while a RUNNING job's environment is built."""
    return "INSTALLING" if info.get("phase") == "installing requirements" else str(info["state"])


def _limits(job) -> str | None:
    """The job's stopping conditions (``max_runtime 432000 s (default, 5 days), max_cost $2``)."""
    from qhybrid.errors import JobError
    from qhybrid.jobs import contract

    try:
        spec = job.spec()
    except JobError:
        return None
    runtime = spec.max_runtime or contract.DEFAULT_MAX_RUNTIME_S
    text = f"max_runtime {runtime:g} s" + (" (the default, 5 days)" if runtime == contract.DEFAULT_MAX_RUNTIME_S else "")
    return text + (f", max_cost ${spec.max_cost:g}" if spec.max_cost else "")


def register(app: typer.Typer) -> None:
    """Add the ``jobs`` group."""
    jobs = typer.Typer(name="jobs", no_args_is_help=True, help="List, inspect, compare and wait for jobs.")
    app.add_typer(jobs)

    @jobs.command("list")
    def list_(state: Annotated[Optional[STATES], typer.Option(case_sensitive=False, help="Only jobs in this state.")] = None,
              limit: Annotated[int, typer.Option("--limit", "-n", help="Newest N jobs (0: all).")] = 20,
              tag: Annotated[Optional[list[str]], typer.Option(
                  "--tag", metavar="KEY=VALUE", help="Only jobs with this tag (repeatable; all must match).")] = None,
              json_: options.Json = False) -> None:
        """Jobs, newest first: state, device, when, billed time, the key result, cost."""
        from qhybrid.cli.results import key_metric
        from qhybrid.cli.run import pairs
        from qhybrid.jobs import Job

        tags = pairs(tag, "--tag") or None
        found = list(reversed(Job.list(state=state.upper() if state else None, tags=tags)))
        shown = found[:limit] if limit > 0 else found
        infos = [(j, _with_phase(j.describe())) for j in shown]
        if json_:
            output.print_json([{**i, "key_metric": key_metric(j, i)} for j, i in infos])
            return
        if not infos:
            output.note("no jobs")
            return
        output.table(["NAME", "STATE", "DEVICE", "WHEN", "TIME", "RESULT", "COST"],
                     [[i["name"], output.state_text("DAMAGED" if i.get("damaged") else _shown_state(i)),
                       (i["device"] or "?").split("/")[-1], _when(i["created"]),
                       "" if i["billed_seconds"] is None else f"{i['billed_seconds']:.0f}s", key_metric(j, i),
                       _cost(i["estimated_cost_usd"])] for j, i in infos],
                     right=("TIME", "COST"), no_wrap=("NAME", "STATE", "DEVICE", "WHEN", "TIME", "COST"), gap=1)
        if len(found) > len(shown):
            output.note(f"{len(found) - len(shown)} older jobs not shown (--limit 0 shows all)")
        for _, i in infos:
            if i.get("damaged"):
                output.note(f"qhybrid: {i['damaged']}")

    @jobs.command("show")
    def show(name: options.JobName, json_: options.Json = False) -> None:
        """A job: state, device, times, hyperparameters, the answer, cost, environment, failure."""
        from qhybrid.cli.results import result_of
        from qhybrid.cli.workload import _cost_line
        from qhybrid.jobs import Job, environment

        job = Job.get(name)
        info = _with_phase(job.describe())
        env = environment.read(job.folder)
        if json_:
            # describe()'s "environment" is the job's dependency environment; here it is environment.json
            output.print_json({**info, "environment": env, "dependency_environment": info["environment"]})
            return
        state = f"{info['state']} ({info['phase']})" if info.get("phase") else info["state"]
        rows = [(k, info[k]) for k in ("name",)] + [("state", output.state_text(state))]
        rows += [(k, info[k]) for k in ("device", "entry_point", "instance_type", "instance_count", "distribution",
                                         "world_size", "created", "started", "ended", "billed_seconds", "folder")]
        rows.append(("hyperparameters", " ".join(f"{k}={v}" for k, v in (info["hyperparameters"] or {}).items())))
        if info.get("tags"):
            rows.append(("tags", " ".join(f"{k}={v}" for k, v in info["tags"].items())))
        result = result_of(job, info)
        if result and result.get("summary"):
            rows.append(("answer", result["summary"]))
        rows.append(("cost", _cost_line(info).removeprefix("cost: ")))
        limits = _limits(job)
        if limits:
            rows.append(("limits", limits))
        from qhybrid.estimate.render import predicted_line

        predicted = predicted_line(info)
        if predicted:
            rows.append(("estimate", predicted))
        if env:
            pk = env.get("packages", {})
            rows.append(("environment", ", ".join(f"{k} {v}" for k, v in pk.items() if v)))
            rows.append(("host", f"{env.get('host')}, {env.get('cpu')} ({env.get('cpu_count')} cores)"
                                 + (f", GPUs: {'; '.join(env['gpus'])}" if env.get("gpus") else ", no GPU")))
            if env.get("git_commit") or env.get("source_git_commit"):
                rows.append(("git", f"qhybrid {env.get('git_commit') or '-'}, source {env.get('source_git_commit') or '-'}"))
            rows.append(("command line", " ".join(env.get("command_line") or [])))
        if not info.get("damaged"):
            rows.append(("dependencies", info.get("environment") or "the caller's interpreter"))
        if info.get("damaged"):
            rows.append(("damaged", info["damaged"]))
        if info["failure_reason"]:
            rows.append(("failure_reason", info["failure_reason"]))
        output.pairs(rows)
        if info["traceback_tail"]:
            output.out().print(info["traceback_tail"], markup=False, highlight=False)

    @jobs.command("logs")
    def logs(name: options.JobName,
             follow: Annotated[bool, typer.Option("--follow", "-f", help="Follow until the job ends; exit 0 only if it COMPLETED.")] = False) -> None:
        """A job's log (stdout and stderr of all its processes)."""
        import sys

        from qhybrid.jobs import Job

        job = Job.get(name)
        if not follow:
            sys.stdout.write(job.logs())
            return
        job.wait(stream=lambda line: print(line, flush=True))
        state = job.state()
        if state != "COMPLETED":
            output.note(f"qhybrid: job {name} {state}: {job.describe()['failure_reason']}")
            raise typer.Exit(1)

    @jobs.command("metrics")
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

    @jobs.command("result")
    def result(name: options.JobName,
               timeout: Annotated[Optional[float], typer.Option(help="Seconds to wait at most.")] = None,
               allow_pickle: options.AllowPickle = False,
               json_: options.Json = False) -> None:
        """Wait for a job and print its result (JSON)."""
        from qhybrid.jobs import Job

        output.print_json(Job.get(name).result(timeout=timeout, allow_pickle=allow_pickle))

    @jobs.command("wait")
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
            output.table(["NAME", "STATE"], [[n, output.state_text(s)] for n, s in states.items()])
        if any(s != "COMPLETED" for s in states.values()):
            raise typer.Exit(1)

    @jobs.command("compare")
    def compare(names: Names,
                all_: Annotated[bool, typer.Option("--all", help="Also the hyperparameters all jobs share.")] = False,
                json_: options.Json = False) -> None:
        """Jobs side by side: the hyperparameters they differ in, answers, final and best metrics, bill."""
        from qhybrid.cli.results import compare as side_by_side

        heads, rows = side_by_side(_jobs(names), everything=all_ or json_)
        if json_:
            output.print_json({row[0]: dict(zip(heads[1:], row[1:])) for row in rows})
            return
        output.table(heads, [[r[0], *[output.fmt(v, 5) for v in r[1:]]] for r in rows])

    @jobs.command("cancel")
    def cancel(name: options.JobName, json_: options.Json = False) -> None:
        """End a job's whole process tree."""
        from qhybrid.jobs import Job

        state = Job.get(name).cancel()
        if json_:
            output.print_json({"job": name, "state": state})
        else:
            print(f"{name} {state}")

    @jobs.command("repair")
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

    @jobs.command("rm")
    def rm(names: Names) -> None:
        """Remove finished jobs from the store (and their folders)."""
        for job in _jobs(names):
            job.delete()
            output.note(f"removed {job.name}")


__all__ = ["register", "submit_and_wait"]
