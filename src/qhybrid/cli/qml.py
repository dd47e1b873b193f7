"""``qhybrid qml``: train the DressedQNN on Sonar as a job, optionally data parallel."""
from __future__ import annotations

from pathlib import Path

from qhybrid.cli.workload import Progress, add_job_options, default_device, default_instance
from qhybrid.errors import SpecError


def register(subparsers) -> None:
    """Add the ``qml`` command."""
    p = subparsers.add_parser(
        "qml", help="train the DressedQNN Sonar classifier as a job",
        description="Train the DressedQNN (circuit-centric quantum classifier) on the Sonar data "
                    "as a job; --data-parallel splits each batch across processes.")
    p.add_argument("--wires", type=int, default=10, help="qubits, 2 or at least 4 (default 10)")
    p.add_argument("--data", type=int, default=208, help="samples drawn from the 208 (default 208)")
    p.add_argument("--batch-size", type=int, default=16, help="global batch size (default 16)")
    p.add_argument("--epochs", type=int, default=5, help="epochs (default 5)")
    p.add_argument("--lr", type=float, default=0.05, help="Adam learning rate (default 0.05)")
    p.add_argument("--gamma", type=float, default=0.9, help="StepLR factor per epoch (default 0.9)")
    p.add_argument("--seed", type=int, default=1967, help="seed for data, weights and shuffling")
    p.add_argument("--dtype", choices=("complex128", "complex64"), default="complex128")
    p.add_argument("--input", default=None, help="a Sonar CSV (sonar.all-data); default the bundled copy")
    p.add_argument("--instance-count", type=int, default=1)
    p.add_argument("--data-parallel", action="store_true", help="distribution='data_parallel'")
    p.add_argument("--processes-per-instance", type=int, default=None,
                   help="data-parallel processes per instance (implies --data-parallel)")
    add_job_options(p)
    p.set_defaults(func=cmd_qml)


def job_kwargs(args) -> dict:
    """``Job.create`` keywords for parsed ``qml`` arguments.

    Raises:
        SpecError, DeviceError: a bad combination (checked before anything is written).
    """
    from qhybrid.devices import parse_device
    from qhybrid.jobs import InstanceConfig

    device = str(parse_device(args.device or default_device()))
    instance = args.instance or default_instance(device)
    parallel = args.data_parallel or args.processes_per_instance is not None
    if args.instance_count > 1 and not parallel:
        raise SpecError(f"--instance-count {args.instance_count} needs --data-parallel "
                        "(without it only one process would train)")
    import qhybrid.workloads.qml as workload

    workload.parse_settings(hyperparameters(args))  # fail here, in one line, not in the job
    kwargs = {
        "device": device,
        "source_module": str(Path(workload.__file__)),
        "entry_point": "qml",
        "job_name": args.name,
        "hyperparameters": hyperparameters(args),
        "instance_config": InstanceConfig(instanceType=instance, instanceCount=args.instance_count),
        "backend": args.backend,
        "address": args.address,
    }
    if args.input:
        kwargs["input_data"] = {"input-data": args.input}
    if parallel:
        kwargs["distribution"] = "data_parallel"
        kwargs["processes_per_instance"] = args.processes_per_instance
    return kwargs


def hyperparameters(args) -> dict[str, str]:
    """The job's string hyperparameters."""
    return {"nwires": str(args.wires), "ndata": str(args.data), "batch_size": str(args.batch_size),
            "epochs": str(args.epochs), "lr": repr(args.lr), "gamma": repr(args.gamma),
            "seed": str(args.seed), "dtype": args.dtype}


def progress(epochs: int) -> Progress:
    """One line per epoch: number, loss, accuracy, seconds (rank 0's metrics)."""
    return Progress(("epoch_seconds", "iteration_number"), lambda s: (
        f"epoch {s['iteration_number']}/{epochs}  loss {float(s.get('Loss', 'nan')):.5f}  "
        f"accuracy {float(s.get('Accuracy', 'nan')):.3f}  {float(s['epoch_seconds']):.2f} s"))


def cmd_qml(args) -> int:
    """Submit, follow, print; with ``--json`` the result dictionary is the last stdout line."""
    from qhybrid.cli.jobs import submit_and_wait

    return submit_and_wait(job_kwargs(args), json_output="result" if args.json else False,
                           progress=progress(args.epochs))
