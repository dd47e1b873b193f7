"""``qhybrid estimate qaoa|qml|run`` and ``qhybrid instances``: memory, time and cost before a run.

``register(app)`` adds both commands to a Typer app. ``estimate``'s sub-commands
take the options of the command they estimate, plus ``--instances a,b,c``,
``--gpu`` / ``--cpu`` and ``--json``; nothing runs but the one-off calibration
and PennyLane probes, and nothing is written but their cache. ``--dry-run`` on ``qaoa``,
``qml`` and ``run`` calls ``dryrun.dry_run`` (below them and this module).
"""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from qhybrid.cli import qaoa, qml, run
from qhybrid.cli.dryrun import dry_run  # noqa: F401  (re-exported: its old home)
from qhybrid.cli.run import job_kwargs
from qhybrid.errors import SpecError

Json = Annotated[bool, typer.Option("--json", help="print one JSON document instead of the table")]
Instances = Annotated[Optional[str], typer.Option("--instances", metavar="A,B,C",
                                                  help="only these instance types (comma separated)")]
Gpu = Annotated[bool, typer.Option("--gpu", help="only GPU instance types")]
Cpu = Annotated[bool, typer.Option("--cpu", help="only CPU instance types")]


def _names(text: str | None) -> list[str] | None:
    if not text:
        return None
    from qhybrid.jobs.instances import get_instance

    names = [t.strip() for t in text.split(",") if t.strip()]
    for name in names:
        get_instance(name)  # InstanceError naming the nearest types
    return names


# options of the estimated commands that do not change an estimate
_UNUSED = ("name", "backend", "address", "quiet", "no_wait", "allow_pickle", "force", "dry_run", "checkpoints_from",
           "max_runtime", "max_cost", "tag")


def _modelled_only(device: str | None) -> str | None:
    """The full name of a device the estimate models without it being installed here (lightning.gpu
    on a machine without a GPU: the seed's device), when ``device`` is one and is not installed."""
    from qhybrid.devices import complete, resolve
    from qhybrid.errors import DeviceError
    from qhybrid.estimate.predict import MODELLED_ONLY

    if not device:
        return None
    full = complete(device)
    if full not in MODELLED_ONLY:
        return None
    try:
        resolve(full)
        return None  # installed: the command's own checks apply
    except DeviceError:
        return full


def _build(build, opts: dict) -> dict:
    """``build(**opts)``; a modelled-only device (``_modelled_only``) is estimated all the same: the
    command's options are checked with a stand-in device, then the job's device and (unless
    ``--instance`` was given) a GPU instance type put back."""
    from dataclasses import replace

    from qhybrid.cli.options import GPU_INSTANCE

    only = _modelled_only(opts.get("device"))
    if only is None:
        return build(**opts)
    kwargs = build(**{**opts, "device": "local:pennylane/default.qubit"})
    kwargs["device"] = only
    if opts.get("instance") is None and kwargs.get("instance_config") is not None:
        kwargs["instance_config"] = replace(kwargs["instance_config"], instanceType=GPU_INSTANCE)
    return kwargs


def mirror(command, build, *, name: str):
    """An ``estimate NAME`` command with ``command``'s own options (less those in ``_UNUSED``) plus
    ``--instances``, ``--gpu`` and ``--cpu``; ``build(**options)`` gives the ``Job.create`` keywords.

    The options are ``command``'s parameters themselves, so ``qhybrid estimate qaoa`` can never drift
    from ``qhybrid qaoa``.
    """
    import inspect
    from typing import get_type_hints

    hints = get_type_hints(command, include_extras=True)
    params = [p.replace(annotation=hints[n]) for n, p in inspect.signature(command).parameters.items()
              if n not in _UNUSED]
    extra = {"instances": (Instances, None), "gpu": (Gpu, False), "cpu": (Cpu, False)}
    params += [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=d, annotation=a)
               for n, (a, d) in extra.items()]

    def estimate(**opts) -> None:
        picked = {n: opts.pop(n) for n in extra}
        json_output = opts.pop("json_", False)
        dry_run(_build(build, opts), json_output=json_output, instances=_names(picked["instances"]),
                gpu=picked["gpu"], cpu=picked["cpu"])

    estimate.__signature__ = inspect.Signature(params)
    estimate.__annotations__ = {p.name: p.annotation for p in params}
    estimate.__doc__ = (f"Predict `qhybrid {name}` with the same options: memory, seconds per iteration, total "
                        "time and cost, here and on every instance type. Nothing runs.")
    return estimate


def _script_kwargs(**opts) -> dict:
    if not Path(opts["source"]).exists():
        raise SpecError(f"source module {opts['source']!r} does not exist (give a .py file or a package folder)")
    return job_kwargs(**opts)


def register(app: typer.Typer) -> None:
    """Add ``estimate`` (qaoa | qml | run) and ``instances`` to ``app``."""
    est = typer.Typer(help="Predict memory, time and cost here and on every instance type, before a run.",
                      no_args_is_help=True)
    app.add_typer(est, name="estimate")
    est.command("qaoa")(mirror(qaoa.qaoa, qaoa.job_kwargs, name="qaoa"))
    est.command("qml")(mirror(qml.qml, qml.job_kwargs, name="qml"))
    est.command("run")(mirror(run.run, _script_kwargs, name="run SOURCE"))

    @app.command("instances")
    def instances_cmd(gpu: Gpu = False, cpu: Cpu = False, json: Json = False) -> None:
        """Instance types: hardware, price per minute (≈ approximate) with its kind, source and date."""
        show_instances(gpu=gpu, cpu=cpu, json_output=json)


def show_instances(*, gpu: bool = False, cpu: bool = False, json_output: bool = False) -> None:
    """Print the catalogue (a table that fits the terminal, each price's source as a numbered note; or
    JSON); unknown prices say unknown."""
    from qhybrid.cli import output
    from qhybrid.jobs.instances import catalogue, format_price, price_file

    if gpu and cpu:
        from qhybrid.errors import SpecError

        raise SpecError("--gpu and --cpu exclude each other; give one or neither")
    insts = [i for i in catalogue().values() if (not gpu or i.gpus) and (not cpu or not i.gpus)]
    if json_output:
        output.print_json([{**i.__dict__, "approximate": i.approximate} for i in insts])
        return
    sources: dict[tuple[str, str], int] = {}
    rows = []
    for i in insts:
        ref = sources.setdefault((i.price_kind, i.price_source), len(sources) + 1) if i.price_source else None
        gpus = f"{i.gpus} {i.gpu_model} {i.gpu_memory_gib or 0:g}G" if i.gpus else ""
        rows.append([i.type, i.vcpus, f"{i.memory_gib:g}", gpus, format_price(i), i.price_kind or "",
                     _price_date(i) if i.usd_per_minute is not None else "", f"[{ref}]" if ref else ""])
    dropped = output.table(["TYPE", "vCPU", "GiB", "GPU", "USD/MIN", "KIND", "DATE", "SRC"], rows,
                           title=f"{len(insts)} instance types (USD per minute of one instance; ≈ approximate)",
                           right=("vCPU", "GiB", "USD/MIN"), gap=1, drop=("KIND",),
                           no_wrap=("TYPE", "GPU", "USD/MIN", "KIND", "DATE", "SRC"))
    for (kind, text), ref in sources.items():
        output.para(f"[{ref}] {kind}: {text}")
    if dropped:
        output.para(f"left out to fit {output.out().width} columns: {', '.join(dropped)} (each source above names "
                    "its kind; --json has every field)")
    output.note(f"unknown prices stay unknown; add yours in {price_file()} "
                f"([prices] \"ml.c5n.xlarge\" = USD per minute)", indent="  ")


def _price_date(inst) -> str:
    """When a price was seen: its date; a user's price, the day its file was last written; else ``undated``."""
    if inst.price_kind == "user":
        import datetime

        from qhybrid.jobs.instances import price_file

        try:
            return datetime.date.fromtimestamp(price_file().stat().st_mtime).isoformat()
        except OSError:
            return "undated"
    return inst.price_date or "undated"
