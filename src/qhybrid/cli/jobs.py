"""Commands ``run``, ``jobs``, ``instances`` and ``devices``; and ``submit_and_wait`` for workload CLIs."""
from __future__ import annotations

import json
import sys
import time

from qhybrid.errors import JobError, SpecError

DEFAULT_DEVICE = "local:qhybrid/qhybrid.cpu"


# -- shared by every command that submits a job (run, qaoa, qml) -----------------------------------
def _err(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class _Status:
    """Log lines on stderr, and on a terminal a status line that rewrites itself."""

    def __init__(self, name: str):
        self.name, self.t0, self.tty, self.shown = name, time.monotonic(), sys.stderr.isatty(), False

    def line(self, text: str) -> None:
        self._clear()
        _err(text)

    def poll(self, state: str) -> None:
        if self.tty and state not in ("COMPLETED", "FAILED", "CANCELLED"):
            sys.stderr.write(f"\r\x1b[2K[{state} {time.monotonic() - self.t0:6.1f} s] {self.name}")
            sys.stderr.flush()
            self.shown = True

    def _clear(self) -> None:
        if self.shown:
            sys.stderr.write("\r\x1b[2K")
            self.shown = False


def _jsonable(value):
    return json.loads(json.dumps(value, default=repr))


def submit_and_wait(job_kwargs: dict, *, json_output=False, progress=None, wait: bool = True) -> int:
    """Submit a job, stream its logs while waiting, print its result and cost; return an exit status.

    Args:
        job_kwargs: keyword arguments of ``Job.create``.
        json_output: True to print one JSON line (job, state, result, billed_seconds, cost_usd,
            cost_on_other_instances_usd) on stdout instead of text; ``"result"`` to print the
            result dictionary alone as the last stdout line (the cost still goes to stderr).
        progress: a callable receiving each log line (default: stderr, with a status line on a terminal).
        wait: False to return right after submitting (prints the job name).

    Returns:
        0 when the job COMPLETED (or was submitted with ``wait=False``), else 1.

    Raises:
        SpecError, InstanceError, DeviceError: bad input (``cli.main`` prints them in one line).
    """
    from qhybrid.jobs import Job
    from qhybrid.jobs.instances import format_usd

    job = Job.create(**job_kwargs)
    if not wait:
        print(json.dumps({"job": job.name, "state": job.state()}) if json_output else job.name)
        return 0
    status = _Status(job.name)
    sink = progress or status.line
    _err(f"qhybrid: submitted job {job.name} (follow with: qhybrid jobs logs -f {job.name})")
    try:
        job.wait(stream=sink, on_poll=None if progress else status.poll)
    except KeyboardInterrupt:
        status.line(f"qhybrid: stopped waiting; job {job.name} keeps running (qhybrid jobs cancel {job.name})")
        return 130
    info = job.describe()
    result = job.result() if info["state"] == "COMPLETED" else None
    if json_output == "result":
        if result is not None:
            print(json.dumps(_jsonable(result)))
    elif json_output:
        out = {
            "job": job.name, "state": info["state"], "result": _jsonable(result),
            "billed_seconds": info["billed_seconds"], "instance_type": info["instance_type"],
            "instance_count": info["instance_count"], "cost_usd": info["estimated_cost_usd"],
            "cost_on_other_instances_usd": info["cost_on_other_instances_usd"],
            "failure_reason": info["failure_reason"],
        }
        print(json.dumps(out))
    elif result is not None:
        print(json.dumps(_jsonable(result), indent=2))
    if info["state"] != "COMPLETED":
        _err(f"qhybrid: error: job {job.name} {info['state']}: {info['failure_reason']}")
        if info["traceback_tail"] and json_output is not True:
            _err(info["traceback_tail"])
        return 1
    if json_output is not True:
        _err(_cost_line(info, format_usd))
    return 0


def _cost_line(info: dict, format_usd) -> str:
    text = (
        f"cost: {format_usd(info['estimated_cost_usd'])} "
        f"(billed {info['billed_seconds']} s x {info['instance_count']} {info['instance_type']})"
    )
    others = info["cost_on_other_instances_usd"]
    if others:
        text += "; same run on " + ", ".join(f"{k}: {format_usd(v)}" for k, v in others.items())
    return text


# -- run -----------------------------------------------------------------------------------------
def _pairs(values, what: str) -> dict:
    out = {}
    for item in values or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SpecError(f"{what} {item!r} must look like KEY=VALUE")
        out[key] = value
    return out


def cmd_run(args) -> int:
    from qhybrid.jobs import InstanceConfig

    kwargs = dict(
        device=args.device,
        source_module=args.source,
        entry_point=args.entry_point,
        job_name=args.name,
        hyperparameters=_pairs(args.hp, "--hp"),
        input_data=_pairs(args.input, "--input") or None,
        instance_config=InstanceConfig(instanceType=args.instance, instanceCount=args.instance_count),
        copy_checkpoints_from_job=args.checkpoints_from,
        distribution="data_parallel" if args.data_parallel or args.processes_per_instance else None,
        max_runtime=args.max_runtime,
        max_cost=args.max_cost,
        processes_per_instance=args.processes_per_instance,
        backend=args.backend,
        address=args.address,
        tags=_pairs(args.tag, "--tag") or None,
    )
    return submit_and_wait(kwargs, json_output=args.json, wait=not args.no_wait)


# -- jobs ----------------------------------------------------------------------------------------
def cmd_list(args) -> int:
    from qhybrid.jobs import Job

    rows = [j.describe() for j in Job.list(state=args.state, tags=_pairs(args.tag, "--tag") or None)]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        _err("no jobs")
        return 0
    print(f"{'NAME':<50} {'STATE':<10} {'INSTANCE':<16} {'CREATED':<26} {'BILLED':>7} {'COST':>10}")
    for r in rows:
        billed = "" if r["billed_seconds"] is None else f"{r['billed_seconds']:.0f} s"
        cost = "?" if r["estimated_cost_usd"] is None else f"${r['estimated_cost_usd']:.4f}"
        print(f"{r['name']:<50} {r['state']:<10} {r['instance_type']:<16} {r['created'] or '':<26} "
              f"{billed:>7} {cost:>10}")
    return 0


def cmd_show(args) -> int:
    from qhybrid.jobs import Job
    from qhybrid.jobs.instances import format_usd

    info = Job.get(args.name).describe()
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    for key in ("name", "state", "device", "entry_point", "instance_type", "instance_count", "distribution",
                "world_size", "created", "started", "ended", "billed_seconds", "folder"):
        print(f"{key:<18} {info[key]}")
    print(f"{'hyperparameters':<18} {json.dumps(info['hyperparameters'])}")
    if info.get("tags"):
        print(f"{'tags':<18} {json.dumps(info['tags'])}")
    environment = info.get("environment") or "(the caller's interpreter)"
    print(f"{'environment':<18} {environment}")
    print(_cost_line(info, format_usd))
    if info["failure_reason"]:
        print(f"{'failure_reason':<18} {info['failure_reason']}")
    if info["traceback_tail"]:
        print(info["traceback_tail"])
    return 0


def cmd_logs(args) -> int:
    from qhybrid.jobs import Job

    job = Job.get(args.name)
    if args.follow:
        job.wait(stream=lambda line: print(line, flush=True))
    else:
        sys.stdout.write(job.logs())
    return 0


def cmd_metrics(args) -> int:
    from qhybrid.jobs import Job

    cols = Job.get(args.name).metrics(metric_type=args.metric_type, statistic=args.statistic, rank=args.rank)
    if args.plot:
        _plot(cols, args.plot, args.name)
        _err(f"wrote {args.plot}")
    if args.json or not cols:
        print(json.dumps(cols, indent=2))
        return 0
    names = list(cols)
    print("  ".join(f"{n:>18}" for n in names))
    for i in range(len(cols[names[0]])):
        print("  ".join(f"{'' if cols[n][i] is None else cols[n][i]!s:>18}" for n in names))
    return 0


def _plot(cols: dict, path: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if "iteration_number" in cols and any(v is not None for v in cols["iteration_number"]):
        xname, xs = "iteration_number", cols["iteration_number"]
    else:
        t0 = min(cols.get("timestamp") or [0])
        xname, xs = "seconds", [t - t0 for t in cols.get("timestamp", [])]
    series = {}
    for name, ys in cols.items():
        if name in ("timestamp", "iteration_number"):
            continue
        pts = [(x, y) for x, y in zip(xs, ys) if x is not None and isinstance(y, (int, float))]
        if pts:
            series[name] = pts
    # one panel per metric: a loss and a time per iteration don't share a scale
    fig, axes = plt.subplots(max(1, len(series)), 1, figsize=(7, 2.4 * max(1, len(series))),
                             sharex=True, squeeze=False)
    for ax, (name, pts) in zip(axes[:, 0], series.items()):
        ax.plot(*zip(*pts), marker=".")
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel(xname)
    axes[0, 0].set_title(title)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def cmd_result(args) -> int:
    from qhybrid.jobs import Job

    print(json.dumps(_jsonable(Job.get(args.name).result(timeout=args.timeout)), indent=2))
    return 0


def cmd_cancel(args) -> int:
    from qhybrid.jobs import Job

    state = Job.get(args.name).cancel()
    print(f"{args.name} {state}")
    return 0


def cmd_rm(args) -> int:
    from qhybrid.jobs import Job

    for name in args.names:
        Job.get(name).delete()
        _err(f"removed {name}")
    return 0


# -- instances, devices ------------------------------------------------------------------------------
def cmd_instances(args) -> int:
    from qhybrid.jobs.instances import catalogue, format_price, price_file

    cat = catalogue()
    if args.json:
        print(json.dumps([i.__dict__ for i in cat.values()], indent=2))
        return 0
    print(f"{'TYPE':<18} {'vCPU':>5} {'MEM GiB':>8} {'GPU':>4} {'GPU MODEL':<10} {'USD/min':>9}  PRICE SOURCE")
    for i in cat.values():
        print(f"{i.type:<18} {i.vcpus:>5} {i.memory_gib:>8g} {i.gpus:>4} {i.gpu_model:<10} "
              f"{format_price(i):>9}  {i.price_source}")
    _err(f"unknown prices stay unknown; add yours in {price_file()} ([prices] \"ml.c5.xlarge\" = USD per minute)")
    return 0


def cmd_devices(args) -> int:
    from qhybrid.devices import available_devices, cuda_available

    avail = available_devices()
    cuda = cuda_available()
    if args.json:
        print(json.dumps({"devices": avail, "cuda": cuda}, indent=2))
        return 0
    print("our engine:          " + ", ".join(f"local:qhybrid/{n}" for n in avail["qhybrid"]))
    print("PennyLane devices:   " + ", ".join(f"local:pennylane/{n}" for n in avail["pennylane"]))
    print(f"CUDA available:      {'yes' if cuda else 'no'}")
    return 0


# -- wiring ----------------------------------------------------------------------------------------
def _add_json(p) -> None:
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def register(subparsers) -> None:
    """Add ``run``, ``jobs``, ``instances`` and ``devices`` to the ``qhybrid`` command."""
    run = subparsers.add_parser("run", help="submit a job script and wait for it",
                                description="Submit SOURCE (a .py file or package folder) as a job.")
    run.add_argument("source", metavar="SOURCE", help="job script (.py) or package folder")
    run.add_argument("--entry-point", help="pkg.module or pkg.module:function (default: SOURCE's name)")
    run.add_argument("--device", default=DEFAULT_DEVICE, help=f"device string (default {DEFAULT_DEVICE})")
    run.add_argument("--hp", action="append", metavar="KEY=VALUE", help="hyperparameter (repeatable)")
    run.add_argument("--input", action="append", metavar="CHANNEL=PATH", help="input channel (repeatable)")
    run.add_argument("--instance", default="ml.m5.large", metavar="TYPE", help="instance type (default ml.m5.large)")
    run.add_argument("--instance-count", type=int, default=1, metavar="N", help="instances (default 1)")
    run.add_argument("--name", help="job name (default generated)")
    run.add_argument("--checkpoints-from", metavar="JOB",
                     help="copy checkpoints in from this earlier job (its name or ARN, local:job/NAME)")
    run.add_argument("--tag", action="append", metavar="KEY=VALUE", help="tag the job (repeatable)")
    run.add_argument("--max-runtime", type=float, metavar="S", help="stop the job after S seconds")
    run.add_argument("--max-cost", type=float, metavar="USD", help="stop the job when its cost reaches USD")
    run.add_argument("--data-parallel", action="store_true", help="distribution='data_parallel'")
    run.add_argument("--processes-per-instance", type=int, metavar="K",
                     help="data-parallel processes per instance (implies --data-parallel)")
    run.add_argument("--backend", default="local", help="where processes run: local (default) or ray")
    run.add_argument("--address", default=None, metavar="ADDR",
                     help="with --backend ray: the Ray cluster, HOST:PORT of its head (ray start --head), "
                     "'auto' or ray://HOST:10001; default $QHYBRID_RAY_ADDRESS, $RAY_ADDRESS, "
                     "else a local cluster on 127.0.0.1")
    run.add_argument("--no-wait", action="store_true", help="print the job name and return at once")
    _add_json(run)
    run.set_defaults(func=cmd_run)

    jobs = subparsers.add_parser("jobs", help="list and inspect jobs", description="List and inspect jobs.")
    jsub = jobs.add_subparsers(dest="jobs_command", metavar="ACTION")
    jobs.set_defaults(func=lambda a: (jobs.print_help(), 1)[1])
    p = jsub.add_parser("list", help="list jobs", description="List jobs, oldest first.")
    p.add_argument("--state", choices=["QUEUED", "RUNNING", "COMPLETED", "FAILED", "CANCELLED"])
    p.add_argument("--tag", action="append", metavar="KEY=VALUE", help="only jobs with this tag (repeatable)")
    _add_json(p)
    p.set_defaults(func=cmd_list)
    p = jsub.add_parser("show", help="describe a job", description="Describe a job: state, times, cost, failure.")
    p.add_argument("name")
    _add_json(p)
    p.set_defaults(func=cmd_show)
    p = jsub.add_parser("logs", help="print a job's log", description="Print a job's log.")
    p.add_argument("name")
    p.add_argument("-f", "--follow", action="store_true", help="follow until the job ends")
    p.set_defaults(func=cmd_logs)
    p = jsub.add_parser("metrics", help="print a job's metrics", description="Print a job's metric columns.")
    p.add_argument("name")
    p.add_argument("--plot", metavar="FILE.png", help="also plot the metrics to FILE.png")
    p.add_argument("--metric-type", choices=["timestamp", "iteration_number"], default="timestamp")
    p.add_argument("--statistic", choices=["max", "min"], default="max")
    p.add_argument("--rank", type=int, default=0, help="rank whose metrics to show (default 0)")
    _add_json(p)
    p.set_defaults(func=cmd_metrics)
    p = jsub.add_parser("result", help="print a job's result", description="Wait for a job; print its result.")
    p.add_argument("name")
    p.add_argument("--timeout", type=float, help="seconds to wait at most")
    p.set_defaults(func=cmd_result)
    p = jsub.add_parser("cancel", help="cancel a job", description="End a job's whole process tree.")
    p.add_argument("name")
    p.set_defaults(func=cmd_cancel)
    p = jsub.add_parser("rm", help="remove finished jobs", description="Remove finished jobs from the store.")
    p.add_argument("names", nargs="+", metavar="NAME")
    p.set_defaults(func=cmd_rm)

    p = subparsers.add_parser("instances", help="instance types and prices",
                              description="Instance types: hardware, price per minute, price source.")
    _add_json(p)
    p.set_defaults(func=cmd_instances)
    p = subparsers.add_parser("devices", help="available devices",
                              description="Our engine, installed PennyLane devices and CUDA availability.")
    _add_json(p)
    p.set_defaults(func=cmd_devices)


__all__ = ["register", "submit_and_wait", "JobError"]
