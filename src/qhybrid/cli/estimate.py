"""``qhybrid estimate qaoa|qml|run`` and ``qhybrid instances``: memory, time and cost before a run.

``register(app)`` adds both commands to a Typer app. ``estimate``'s sub-commands
take the options of the command they estimate, plus ``--instances a,b,c``,
``--gpu`` / ``--cpu`` and ``--json``; nothing runs but the one-off calibration
and PennyLane probes, and nothing is written but their cache. ``dry_run(kwargs)``
is what ``--dry-run`` on ``qaoa``, ``qml`` and ``run`` calls.
"""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

QHYBRID_CPU = "local:qhybrid/qhybrid.cpu"
Json = Annotated[bool, typer.Option("--json", help="print one JSON document instead of the table")]
Instances = Annotated[Optional[str], typer.Option("--instances", metavar="A,B,C",
                                                  help="only these instance types (comma separated)")]
Gpu = Annotated[bool, typer.Option("--gpu", help="only GPU instance types")]
Cpu = Annotated[bool, typer.Option("--cpu", help="only CPU instance types")]
Device = Annotated[Optional[str], typer.Option(help="local:qhybrid/qhybrid.cpu (default; qhybrid.gpu with CUDA), "
                                                    "local:pennylane/lightning.qubit, lightning.gpu, ...")]
Instance = Annotated[Optional[str], typer.Option(help="the job's instance type (default ml.m5.2xlarge; "
                                                      "ml.p3.2xlarge for GPU devices)")]
Count = Annotated[int, typer.Option("--instance-count", min=1, help="instances (default 1)")]


def dry_run(job_kwargs: dict, *, json_output: bool = False, instances=None, gpu: bool = False,
            cpu: bool = False) -> int:
    """Estimate ``Job.create(**job_kwargs)`` and print it (table or JSON); nothing is submitted. Returns 0."""
    from qhybrid.estimate import estimate_job, render, to_json

    est = estimate_job(job_kwargs, instances=instances, gpu=gpu, cpu=cpu)
    if json_output:
        typer.echo(to_json(est))
    else:
        render(est)
    return 0


def _names(text: str | None) -> list[str] | None:
    if not text:
        return None
    from qhybrid.jobs.instances import get_instance

    names = [t.strip() for t in text.split(",") if t.strip()]
    for name in names:
        get_instance(name)  # InstanceError naming the nearest types
    return names


def _device(device: str | None) -> str:
    if device:
        return device
    from qhybrid.devices import cuda_available

    return "local:qhybrid/qhybrid.gpu" if cuda_available() else QHYBRID_CPU


def _instance(instance: str | None, device: str) -> str:
    if instance:
        return instance
    gpu = device.endswith(("qhybrid.gpu", "lightning.gpu"))
    return "ml.p3.2xlarge" if gpu else "ml.m5.2xlarge"


def qaoa_kwargs(*, nodes: int = 18, edges: int = 24, layers: int = 2, iterations: int = 5, stepsize: float = 0.1,
                seed: int = 1967, problem: str = "maxcut", optimizer: str = "adam", dtype: str = "complex128",
                diff_method: str = "adjoint", device: str | None = None, instance: str | None = None,
                instance_count: int = 1) -> dict:
    """``Job.create`` keywords of ``qhybrid qaoa`` with these options (validated)."""
    import qhybrid.workloads.qaoa as workload
    from qhybrid.jobs import InstanceConfig

    dev = _device(device)
    hp = {"n_nodes": str(nodes), "n_edges": str(edges), "n_layers": str(layers), "seed": str(seed),
          "iterations": str(iterations), "stepsize": repr(stepsize), "diff_method": diff_method,
          "problem": problem, "optimizer": optimizer, "dtype": dtype}
    workload.parse_settings(hp)
    return {"device": dev, "source_module": str(Path(workload.__file__)), "entry_point": "qaoa",
            "hyperparameters": hp,
            "instance_config": InstanceConfig(instanceType=_instance(instance, dev), instanceCount=instance_count)}


def qml_kwargs(*, wires: int = 10, data: int = 208, batch_size: int = 16, epochs: int = 5, lr: float = 0.05,
               gamma: float = 0.9, seed: int = 1967, dtype: str = "complex128", device: str | None = None,
               instance: str | None = None, instance_count: int = 1, data_parallel: bool = False,
               processes_per_instance: int | None = None) -> dict:
    """``Job.create`` keywords of ``qhybrid qml`` with these options (validated)."""
    import qhybrid.workloads.qml as workload
    from qhybrid.errors import SpecError
    from qhybrid.jobs import InstanceConfig

    dev = _device(device)
    parallel = data_parallel or processes_per_instance is not None
    if instance_count > 1 and not parallel:
        raise SpecError(f"--instance-count {instance_count} needs --data-parallel "
                        "(without it only one process would train)")
    hp = {"nwires": str(wires), "ndata": str(data), "batch_size": str(batch_size), "epochs": str(epochs),
          "lr": repr(lr), "gamma": repr(gamma), "seed": str(seed), "dtype": dtype}
    workload.parse_settings(hp)
    out = {"device": dev, "source_module": str(Path(workload.__file__)), "entry_point": "qml",
           "hyperparameters": hp,
           "instance_config": InstanceConfig(instanceType=_instance(instance, dev), instanceCount=instance_count)}
    if parallel:
        out["distribution"] = "data_parallel"
        out["processes_per_instance"] = processes_per_instance
    return out


def _pairs(values, what: str) -> dict:
    from qhybrid.errors import SpecError

    out = {}
    for item in values or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SpecError(f"{what} {item!r} must look like KEY=VALUE")
        out[key] = value
    return out


def _fail(err) -> None:
    typer.echo(f"qhybrid: error: {err}", err=True)
    raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``estimate`` (qaoa | qml | run) and ``instances`` to ``app``."""
    from qhybrid.errors import QhybridError

    est = typer.Typer(help="predict memory, time and cost here and on every instance type, before a run",
                      no_args_is_help=True)
    app.add_typer(est, name="estimate")

    @est.command("qaoa")
    def estimate_qaoa(nodes: int = 18, edges: int = 24, layers: int = 2, iterations: int = 5,
                      stepsize: float = 0.1, seed: int = 1967, problem: str = "maxcut", optimizer: str = "adam",
                      dtype: str = "complex128", diff_method: str = "adjoint", device: Device = None,
                      instance: Instance = None, instance_count: Count = 1, instances: Instances = None,
                      gpu: Gpu = False, cpu: Cpu = False, json: Json = False) -> None:
        """Estimate `qhybrid qaoa` with the same options."""
        try:
            kw = qaoa_kwargs(nodes=nodes, edges=edges, layers=layers, iterations=iterations, stepsize=stepsize,
                             seed=seed, problem=problem, optimizer=optimizer, dtype=dtype,
                             diff_method=diff_method, device=device, instance=instance,
                             instance_count=instance_count)
            dry_run(kw, json_output=json, instances=_names(instances), gpu=gpu, cpu=cpu)
        except QhybridError as err:
            _fail(err)

    @est.command("qml")
    def estimate_qml(wires: int = 10, data: int = 208, batch_size: int = 16, epochs: int = 5, lr: float = 0.05,
                     gamma: float = 0.9, seed: int = 1967, dtype: str = "complex128", device: Device = None,
                     instance: Instance = None, instance_count: Count = 1, data_parallel: bool = False,
                     processes_per_instance: Optional[int] = None, instances: Instances = None,
                     gpu: Gpu = False, cpu: Cpu = False, json: Json = False) -> None:
        """Estimate `qhybrid qml` with the same options."""
        try:
            kw = qml_kwargs(wires=wires, data=data, batch_size=batch_size, epochs=epochs, lr=lr, gamma=gamma,
                            seed=seed, dtype=dtype, device=device, instance=instance,
                            instance_count=instance_count, data_parallel=data_parallel,
                            processes_per_instance=processes_per_instance)
            dry_run(kw, json_output=json, instances=_names(instances), gpu=gpu, cpu=cpu)
        except QhybridError as err:
            _fail(err)

    @est.command("run")
    def estimate_run(source: Annotated[str, typer.Argument(help="job script (.py) or package folder")],
                     entry_point: Optional[str] = None, device: str = QHYBRID_CPU,
                     hp: Annotated[Optional[list[str]], typer.Option(metavar="KEY=VALUE")] = None,
                     instance: str = "ml.m5.large", instance_count: Count = 1, data_parallel: bool = False,
                     processes_per_instance: Optional[int] = None, instances: Instances = None,
                     gpu: Gpu = False, cpu: Cpu = False, json: Json = False) -> None:
        """Estimate `qhybrid run SOURCE` from the script's own history (our workloads: the model)."""
        from qhybrid.jobs import InstanceConfig

        try:
            kw = {"device": device, "source_module": source, "entry_point": entry_point,
                  "hyperparameters": _pairs(hp, "--hp"),
                  "instance_config": InstanceConfig(instanceType=instance, instanceCount=instance_count)}
            if data_parallel or processes_per_instance:
                kw["distribution"] = "data_parallel"
                kw["processes_per_instance"] = processes_per_instance
            if not Path(source).exists():
                from qhybrid.errors import SpecError

                raise SpecError(f"source module {source!r} does not exist (give a .py file or a package folder)")
            dry_run(kw, json_output=json, instances=_names(instances), gpu=gpu, cpu=cpu)
        except QhybridError as err:
            _fail(err)

    @app.command("instances")
    def instances_cmd(gpu: Gpu = False, cpu: Cpu = False, json: Json = False) -> None:
        """Instance types: hardware, price per minute (≈ approximate) with its kind, source and date."""
        try:
            show_instances(gpu=gpu, cpu=cpu, json_output=json)
        except QhybridError as err:
            _fail(err)


def show_instances(*, gpu: bool = False, cpu: bool = False, json_output: bool = False) -> None:
    """Print the catalogue (table or JSON); unknown prices say unknown."""
    import json as json_

    from rich.console import Console
    from rich.table import Table

    from qhybrid.jobs.instances import catalogue, format_price, price_file

    insts = [i for i in catalogue().values() if (not gpu or i.gpus) and (not cpu or not i.gpus)]
    if json_output:
        typer.echo(json_.dumps([{**i.__dict__, "approximate": i.approximate} for i in insts]))
        return
    console = Console()
    if not console.is_terminal:
        console = Console(width=200)
    table = Table(title=f"{len(insts)} instance types (USD per minute of one instance; ≈ approximate)")
    for name in ("type", "vCPU", "GiB", "GPUs", "GPU GiB", "GPU GB/s", "CPU", "CPU GB/s", "USD/min", "kind",
                 "date", "source"):
        table.add_column(name, overflow="fold" if name == "source" else "ellipsis")
    for i in insts:
        gpus = f"{i.gpus} {i.gpu_model}" if i.gpus else "0"
        table.add_row(i.type, str(i.vcpus), f"{i.memory_gib:g}", gpus, f"{i.gpu_memory_gib or '':g}" if i.gpus else "",
                      f"{i.gpu_memory_bandwidth_gbs:g}" if i.gpu_memory_bandwidth_gbs else "", i.cpu_generation,
                      f"{i.cpu_socket_bandwidth_gbs:g}" if i.cpu_socket_bandwidth_gbs else "", format_price(i),
                      i.price_kind or "unknown", i.price_date, i.price_source)
    console.print(table)
    console.print(f"[dim]unknown prices stay unknown; add yours in {price_file()} "
                  f"([prices] \"ml.c5n.xlarge\" = USD per minute)[/dim]")
