"""``qhybrid run``: submit a job script and follow it."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from qhybrid.cli import dryrun

from qhybrid.cli import options


def pairs(values: list[str] | None, what: str) -> dict:
    """``KEY=VALUE`` items as a dict.

    Raises:
        SpecError: an item without ``=`` or without a key.
    """
    from qhybrid.errors import SpecError

    out = {}
    for item in values or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SpecError(f"{what} {item!r} must look like KEY=VALUE")
        out[key] = value
    return out


def job_kwargs(*, source: str, entry_point: Optional[str] = None, device: Optional[str] = None,
               hp: Optional[list[str]] = None, input_: Optional[list[str]] = None, instance: Optional[str] = None,
               instance_count: int = 1, name: Optional[str] = None, checkpoints_from: Optional[str] = None,
               max_runtime: Optional[float] = None, max_cost: Optional[float] = None, data_parallel: bool = False,
               processes_per_instance: Optional[int] = None, backend: str = "local",
               address: Optional[str] = None, tag: Optional[list[str]] = None) -> dict:
    """``Job.create`` keywords for the ``run`` command's options.

    Raises:
        SpecError, DeviceError: a malformed KEY=VALUE or an unknown device, in one line.
    """
    from qhybrid.jobs import InstanceConfig

    dev = options.device_string(device) if device else "local:qhybrid/qhybrid.cpu"
    instance = options.instance_for(dev, instance)
    return dict(
        device=dev,
        source_module=source, entry_point=entry_point, job_name=name, hyperparameters=pairs(hp, "--hp"),
        input_data=pairs(input_, "--input") or None,
        instance_config=InstanceConfig(instanceType=instance, instanceCount=instance_count),
        copy_checkpoints_from_job=checkpoints_from,
        distribution="data_parallel" if data_parallel or processes_per_instance else None,
        max_runtime=max_runtime, max_cost=max_cost, processes_per_instance=processes_per_instance,
        backend=backend, address=address, tags=pairs(tag, "--tag") or None,
    )


def run(
    source: Annotated[str, typer.Argument(metavar="SOURCE", help="Job script (.py) or package folder.")],
    entry_point: Annotated[Optional[str], typer.Option(
        help="pkg.module or pkg.module:function (default: SOURCE's name).")] = None,
    device: options.Device = None,
    hp: Annotated[Optional[list[str]], typer.Option(
        metavar="KEY=VALUE", help="A hyperparameter (repeatable).")] = None,
    input_: Annotated[Optional[list[str]], typer.Option(
        "--input", metavar="CHANNEL=PATH", help="An input channel (repeatable).")] = None,
    instance: options.Instance = None,
    instance_count: Annotated[int, typer.Option(metavar="N", help="Instances.")] = 1,
    name: options.Name = None,
    checkpoints_from: Annotated[Optional[str], typer.Option(
        metavar="JOB", help="Copy checkpoints in from this earlier job (its name, local:job/NAME or a Braket job ARN).")] = None,
    tag: Annotated[Optional[list[str]], typer.Option(
        "--tag", metavar="KEY=VALUE", help="Tag the job (repeatable; see: qhybrid jobs list --tag).")] = None,
    max_runtime: Annotated[Optional[float], typer.Option(metavar="S", help="Stop the job after S seconds.")] = None,
    max_cost: options.MaxCost = None,
    force: options.Force = False,
    data_parallel: Annotated[bool, typer.Option(
        "--data-parallel", help="Run data parallel: one process per GPU, or --processes-per-instance "
                                "(Braket's distribution data_parallel).")] = False,
    processes_per_instance: Annotated[Optional[int], typer.Option(
        metavar="K", help="Data-parallel processes per instance (implies --data-parallel).")] = None,
    backend: options.Backend = "local",
    address: options.Address = None,
    no_wait: options.NoWait = False,
    allow_pickle: options.AllowPickle = False,
    dry_run: options.DryRun = False,
    json_: options.Json = False,
    quiet: options.Quiet = False,
) -> None:
    """Submit SOURCE (a .py file or a package folder) as a job and follow it to its result."""
    from qhybrid.cli.workload import ProgressSpec, exit_with, submit_and_wait

    kwargs = job_kwargs(source=source, entry_point=entry_point, device=device, hp=hp, input_=input_,
                        instance=instance, instance_count=instance_count, name=name,
                        checkpoints_from=checkpoints_from, max_runtime=max_runtime, max_cost=max_cost,
                        data_parallel=data_parallel, processes_per_instance=processes_per_instance,
                        backend=backend, address=address, tag=tag)
    if dry_run:
        return dryrun.dry_run(kwargs, json_output=json_)
    exit_with(submit_and_wait({**kwargs, "force": force}, json_output=json_, wait=not no_wait, quiet=quiet, allow_pickle=allow_pickle,
                              progress=ProgressSpec(show={}, first=1)))  # shows what it logs, as numbered


def register(app: typer.Typer) -> None:
    """Add the ``run`` command."""
    app.command("run")(run)
