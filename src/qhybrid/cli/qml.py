"""``qhybrid qml``: train the DressedQNN on Sonar as a job (optionally data parallel), with
held-out accuracy at the end."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from qhybrid.cli import dryrun

from qhybrid.cli import options


def job_kwargs(*, wires: int = 10, data: int = 208, batch_size: int = 16, epochs: int = 10, lr: float = 0.05,
               gamma: float = 0.9, val_fraction: float = 0.25, seed: int = 1967, dtype: str = "complex128",
               input_: Optional[str] = None, instance_count: int = 1, data_parallel: bool = False,
               processes_per_instance: Optional[int] = None, device: Optional[str] = None,
               instance: Optional[str] = None, name: Optional[str] = None, backend: str = "local",
               address: Optional[str] = None, max_cost: Optional[float] = None,
               max_batch_states: int = 0) -> dict:
    """``Job.create`` keywords for the ``qml`` command's options (checked before anything is written).

    Raises:
        SpecError, DeviceError: a bad value or combination, in one line.
    """
    import qhybrid.workloads.qml as workload
    from qhybrid.errors import SpecError
    from qhybrid.jobs import InstanceConfig

    if epochs < 1:
        raise SpecError(f"--epochs {epochs}: give 1 or more")
    dev = options.device_string(device)
    parallel = data_parallel or processes_per_instance is not None
    if instance_count > 1 and not parallel:
        raise SpecError(f"--instance-count {instance_count} needs --data-parallel "
                        "(without it only one process would train)")
    hp = {"nwires": str(wires), "ndata": str(data), "batch_size": str(batch_size), "epochs": str(epochs),
          "lr": repr(lr), "gamma": repr(gamma), "val_fraction": repr(val_fraction), "seed": str(seed), "dtype": dtype}
    if max_batch_states:
        hp["max_batch_states"] = str(max_batch_states)
    workload.parse_settings(hp)  # fail here, in one line, not in the job
    kwargs = {"device": dev, "source_module": str(Path(workload.__file__)), "entry_point": "qml",
              "job_name": name, "hyperparameters": hp, "backend": backend, "address": address,
              "instance_config": InstanceConfig(instanceType=options.instance_for(dev, instance),
                                                instanceCount=instance_count), "max_cost": max_cost}
    if input_:
        check_sonar_file(input_, ndata=data)
        kwargs["input_data"] = {"input-data": input_}
    if parallel:
        kwargs["distribution"] = "data_parallel"
        kwargs["processes_per_instance"] = processes_per_instance
    return kwargs


def check_sonar_file(given: str, *, ndata: int) -> int:
    """Check ``--input`` before anything is submitted: a Sonar CSV (rows of 60 numbers and a label M
    or R), or a folder holding one, with at least ``ndata`` rows; return its row count.

    Raises:
        SpecError: one line naming the path as given, the line and what is wrong.
    """
    import csv
    from pathlib import Path

    from qhybrid.errors import SpecError
    from qhybrid.workloads.qml import find_data

    path = Path(given).expanduser()
    found = find_data(path) if path.is_dir() else path
    if not path.exists() or found is None:
        raise SpecError(f"--input {given!r}: no such file" if not path.exists() else
                        f"--input {given!r}: a folder without a data file (sonar.all-data or a .csv)")
    where = repr(given) if found == path else f"{given!r} ({found.relative_to(path)})"
    rows = 0
    try:
        with open(found, newline="", encoding="utf-8") as f:
            for line, row in enumerate(csv.reader(f), start=1):
                if not any(cell.strip() for cell in row):
                    continue
                problem = (f"{len(row)} columns; expected 60 numbers and a label M or R" if len(row) != 61 else
                           f"label {row[-1].strip()!r}; expected M (mine) or R (rock)"
                           if row[-1].strip() not in ("M", "R") else None)
                if problem is None:
                    try:
                        [float(cell) for cell in row[:-1]]
                    except ValueError as err:
                        problem = str(err)
                if problem:
                    raise SpecError(f"--input {where}, line {line}: {problem}")
                rows += 1
    except (OSError, UnicodeDecodeError) as err:
        raise SpecError(f"--input {where}: cannot read it ({err.__class__.__name__}: {err})") from None
    if rows < max(2, ndata):
        raise SpecError(f"--input {where}: {rows} data rows, fewer than --data {ndata} (give --data {rows} "
                        "or less)" if rows >= 2 else f"--input {where}: {rows} data rows; a train/validation "
                        "split needs more")
    return rows


def progress_spec(epochs: int):
    """The live display: training loss, training and validation accuracy, seconds per epoch."""
    from qhybrid.cli.workload import ProgressSpec

    return ProgressSpec(total=epochs, unit="epoch", first=1,
                        show={"Loss": "loss {:.4f}", "train_accuracy": "train {:.3f}",
                              "val_accuracy": "val {:.3f}", "epoch_seconds": "{:.2f} s"})


def show_result(result: dict) -> None:
    """The held-out accuracy in words, then the numbers behind it."""
    from qhybrid.cli import output

    output.para(result["summary"], style="bold")
    secs = result.get("epoch_seconds") or []
    output.pairs([
        ("train accuracy", f"{result['train_accuracy']:.3f} (loss {result['loss']:.4f})"),
        ("validation", f"accuracy {output.fmt(result['val_accuracy'], 3)}, loss {output.fmt(result['val_loss'], 4)}"),
        ("epochs", f"{result['epochs']} of {result['n_train']} samples, batch {result['batch_size']}, "
                   f"{result['world_size']} process(es)"),
        ("time", f"{sum(secs):.2f} s training" + (f" (first epoch {secs[0]:.2f} s)" if secs else "")),
    ] + ([("engine chunk", "{train} sample(s) a call in training, {eval} in evaluation".format(
        **result["engine_chunk"]))] if (result.get("engine_chunk") or {}).get("train") else []))


def qml(
    wires: Annotated[int, typer.Option(help="Qubits: 2, or at least 4.")] = 10,
    data: Annotated[int, typer.Option(help="Samples drawn from Sonar's 208.")] = 208,
    batch_size: Annotated[int, typer.Option(help="Global batch size.")] = 16,
    epochs: Annotated[int, typer.Option(help="Epochs.")] = 10,
    lr: Annotated[float, typer.Option(help="Adam learning rate.")] = 0.05,
    gamma: Annotated[float, typer.Option(help="StepLR factor per epoch.")] = 0.9,
    val_fraction: Annotated[float, typer.Option(help="Share held out (stratified, seeded) for validation.")] = 0.25,
    seed: options.Seed = 1967,
    dtype: options.Dtype = "complex128",
    max_batch_states: Annotated[int, typer.Option(
        help="Most samples the engine simulates at once (0: as many as fit the free memory).")] = 0,
    input_: Annotated[Optional[str], typer.Option(
        "--input", metavar="CSV", help="A Sonar CSV (sonar.all-data); default the bundled copy.")] = None,
    instance_count: Annotated[int, typer.Option(help="Instances (needs --data-parallel above 1).")] = 1,
    data_parallel: Annotated[bool, typer.Option("--data-parallel", help="Split each batch across processes (DDP).")] = False,
    processes_per_instance: Annotated[Optional[int], typer.Option(
        help="Data-parallel processes per instance (implies --data-parallel).")] = None,
    device: options.Device = None,
    instance: options.Instance = None,
    name: options.Name = None,
    max_cost: options.MaxCost = None,
    force: options.Force = False,
    backend: options.Backend = "local",
    address: options.Address = None,
    dry_run: options.DryRun = False,
    json_: options.Json = False,
    quiet: options.Quiet = False,
) -> None:
    """Train the DressedQNN Sonar classifier as a job; report held-out accuracy."""
    from qhybrid.cli.workload import exit_with, submit_and_wait

    kwargs = job_kwargs(wires=wires, data=data, batch_size=batch_size, epochs=epochs, lr=lr, gamma=gamma,
                        val_fraction=val_fraction, seed=seed, dtype=dtype, input_=input_,
                        instance_count=instance_count, data_parallel=data_parallel,
                        processes_per_instance=processes_per_instance, device=device, instance=instance,
                        name=name, backend=backend, address=address, max_cost=max_cost,
                        max_batch_states=max_batch_states)
    if dry_run:
        return dryrun.dry_run(kwargs, json_output=json_)
    exit_with(submit_and_wait({**kwargs, "force": force}, json_output=json_, progress=progress_spec(epochs),
                              show=show_result, quiet=quiet))


def register(app: typer.Typer) -> None:
    """Add the ``qml`` command."""
    app.command("qml")(qml)
