"""``qhybrid qaoa``: QAOA Max-Cut / Max-Clique as a job, with live progress and its cost."""
from __future__ import annotations

from pathlib import Path

from qhybrid.cli.workload import Progress, add_job_options, default_device, default_instance


def register(subparsers) -> None:
    """Add the ``qaoa`` command."""
    p = subparsers.add_parser(
        "qaoa", help="optimise QAOA Max-Cut (or Max-Clique) on a random graph as a job",
        description="Run QAOA on gnm_random_graph(nodes, edges, seed) (or --graph FILE) as a job on "
                    "the local backend: Adam on the PennyLane QAOA circuit, one progress line per "
                    "iteration, then the result and what the run would cost on the instance type.")
    p.add_argument("--nodes", type=int, default=18, help="graph nodes = qubits (default 18)")
    p.add_argument("--edges", type=int, default=24, help="graph edges (default 24)")
    p.add_argument("--layers", type=int, default=2, help="QAOA depth p (default 2)")
    p.add_argument("--iterations", type=int, default=5, help="optimizer steps (default 5)")
    p.add_argument("--stepsize", type=float, default=0.1, help="Adam step size (default 0.1)")
    p.add_argument("--seed", type=int, default=1967, help="seed of the graph and the initial parameters")
    p.add_argument("--problem", choices=("maxcut", "maxclique"), default="maxcut")
    p.add_argument("--optimizer", choices=("adam", "sgd"), default="adam")
    p.add_argument("--dtype", choices=("complex128", "complex64"), default="complex128")
    p.add_argument("--diff-method", default="adjoint", help="for local:pennylane/* devices (default adjoint)")
    p.add_argument("--graph", default=None, help="a graph file (node-link JSON or edge list 'i j [w]')")
    add_job_options(p)
    p.set_defaults(func=cmd_qaoa)


def hyperparameters(args) -> dict[str, str]:
    """The job's string hyperparameters."""
    return {"n_nodes": str(args.nodes), "n_edges": str(args.edges), "n_layers": str(args.layers),
            "seed": str(args.seed), "iterations": str(args.iterations), "stepsize": repr(args.stepsize),
            "diff_method": args.diff_method, "problem": args.problem, "optimizer": args.optimizer,
            "dtype": args.dtype}


def job_kwargs(args) -> dict:
    """``Job.create`` keywords for parsed ``qaoa`` arguments.

    Raises:
        SpecError, DeviceError: bad values (checked before anything is written).
    """
    from qhybrid.devices import parse_device
    from qhybrid.errors import SpecError
    from qhybrid.jobs import InstanceConfig
    import qhybrid.workloads.qaoa as workload

    device = str(parse_device(args.device or default_device()))
    hp = hyperparameters(args)
    workload.parse_settings(hp)  # fail here, in one line, not inside the job
    kwargs = {
        "device": device,
        "source_module": str(Path(workload.__file__)),
        "entry_point": "qaoa",
        "job_name": args.name,
        "hyperparameters": hp,
        "backend": args.backend,
        "address": args.address,
        "instance_config": InstanceConfig(instanceType=args.instance or default_instance(device)),
    }
    if args.graph:
        if not Path(args.graph).is_file():
            raise SpecError(f"--graph {args.graph!r}: no such file (node-link JSON or an edge list)")
        kwargs["input_data"] = {"input-graph": args.graph}
    return kwargs


def progress(iterations: int) -> Progress:
    """One line per iteration: number, cost, seconds."""
    return Progress(("iteration_seconds", "Cost", "iteration_number"), lambda s: (
        f"iteration {int(s['iteration_number']) + 1}/{iterations}  cost {float(s['Cost']):.6f}  "
        f"{float(s['iteration_seconds']):.3f} s"))


def cmd_qaoa(args) -> int:
    from qhybrid.cli.jobs import submit_and_wait

    return submit_and_wait(job_kwargs(args), json_output="result" if args.json else False, progress=progress(args.iterations))
