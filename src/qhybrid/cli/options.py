"""Options shared by several commands, as ``Annotated`` types: a command takes one by declaring a
parameter, e.g. ``json_: options.Json = False``; a new option is one such line.

Device strings may be bare PennyLane names (``lightning.qubit`` means
``local:pennylane/lightning.qubit``; ``qhybrid.cpu`` means ``local:qhybrid/qhybrid.cpu``).
Choices are case-insensitive.
"""
from __future__ import annotations

from typing import Annotated, Literal, Optional

import typer

CPU_INSTANCE = "ml.m5.2xlarge"
GPU_INSTANCE = "ml.p3.2xlarge"

Json = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout instead of text.")]
Device = Annotated[Optional[str], typer.Option(
    "--device", "-d", metavar="DEVICE",
    help="qhybrid.cpu (default; qhybrid.gpu with CUDA) or a PennyLane device: lightning.qubit, "
         "default.qubit, ... Full names work too: local: + qhybrid/NAME or pennylane/NAME.")]
Instance = Annotated[Optional[str], typer.Option(
    "--instance", metavar="TYPE",
    help=f"Instance type the run is billed as (default {CPU_INSTANCE}; {GPU_INSTANCE} for GPU devices).")]
Name = Annotated[Optional[str], typer.Option("--name", help="Job name (default: generated).")]
Backend = Annotated[Literal["local", "ray"], typer.Option(
    "--backend", case_sensitive=False, help="Where the job's processes run.")]
Address = Annotated[Optional[str], typer.Option(
    "--address", metavar="ADDR",
    help="With --backend ray: the cluster, HOST:PORT of its head, 'auto' or ray://HOST:10001 "
         "(default: the variable QHYBRID_RAY_ADDRESS, else RAY_ADDRESS, else a local cluster on 127.0.0.1).")]
Dtype = Annotated[Literal["complex128", "complex64"], typer.Option(
    "--dtype", case_sensitive=False, help="State-vector precision.")]
Seed = Annotated[int, typer.Option("--seed", help="Seed of the data / graph and the initial parameters.")]
NoWait = Annotated[bool, typer.Option("--no-wait", help="Print the job name and return at once.")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress display, only the result.")]
JobName = Annotated[str, typer.Argument(metavar="NAME", help="A job's name (see: qhybrid jobs list).")]
DryRun = Annotated[bool, typer.Option(
    "--dry-run", help="Print what the run needs and costs, here and on every instance type (qhybrid estimate); "
                      "run nothing.")]
MaxCost = Annotated[Optional[float], typer.Option(
    "--max-cost", metavar="USD",
    help="Refuse the job when its predicted cost exceeds USD; stop it when its cost reaches USD.")]
Force = Annotated[bool, typer.Option(
    "--force", help="Submit even when the predicted cost exceeds --max-cost (it is still stopped there).")]
AllowPickle = Annotated[bool, typer.Option(
    "--allow-pickle", help="Load a pickled result (dataFormat pickled_v4): this runs code from the file, "
                           "so only for results you trust.")]


def cuda_present() -> bool:
    """Whether the default device is ``qhybrid.gpu``: an NVIDIA driver reporting a GPU here and a
    torch built for CUDA (``devices.cuda_expected``). torch is not imported here (a second or
    more); the job checks that torch sees CUDA."""
    from qhybrid.devices import cuda_expected

    return cuda_expected()


def device_string(value: str | None) -> str:
    """The full device string for ``--device`` (bare names completed), checked.

    Raises:
        DeviceError: an unknown device, listing the valid ones.
    """
    from qhybrid.devices import complete, resolve

    if value is None:
        value = "local:qhybrid/qhybrid.gpu" if cuda_present() else "local:qhybrid/qhybrid.cpu"
    return str(resolve(complete(value)))


def instance_for(device: str, instance: str | None) -> str:
    """``instance``, or the default of every command (``run``, ``qaoa``, ``qml``): ``CPU_INSTANCE``,
    ``GPU_INSTANCE`` for GPU devices (both priced as Braket Hybrid Jobs rates)."""
    from qhybrid.devices import resolve

    return instance or (GPU_INSTANCE if resolve(device).needs_gpu else CPU_INSTANCE)
