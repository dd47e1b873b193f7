"""``qhybrid qaoa``: QAOA Max-Cut / Max-Clique as a job, with live progress, the answer and its cost."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, Optional

import typer

from qhybrid.cli import dryrun

from qhybrid.cli import options

def job_kwargs(*, nodes: int = 18, edges: int = 24, layers: int = 2, iterations: Optional[int] = None,
               max_iterations: int = 300, tolerance: float = 1e-3, starts: int = 4, stepsize: Optional[float] = None,
               seed: int = 1967, problem: str = "maxcut", optimizer: str = "adam", dtype: str = "complex128",
               diff_method: str = "adjoint", graph: Optional[str] = None, preset: Optional[str] = None,
               device: Optional[str] = None, instance: Optional[str] = None, name: Optional[str] = None,
               backend: str = "local", address: Optional[str] = None, max_cost: Optional[float] = None) -> dict:
    """``Job.create`` keywords for the ``qaoa`` command's options (checked before anything is written).

    Raises:
        SpecError, DeviceError: bad values, in one line.
    """
    import qhybrid.workloads.qaoa as workload
    from qhybrid.errors import SpecError
    from qhybrid.jobs import InstanceConfig

    if iterations is not None and iterations < 1:
        raise SpecError(f"--iterations {iterations}: give 1 or more (an iteration is one optimizer step of all "
                        "the starts), or leave it out to run to convergence")
    dev = options.device_string(device)
    hp = {"n_nodes": str(nodes), "n_edges": str(edges), "n_layers": str(layers), "seed": str(seed),
          "iterations": "auto" if iterations is None else str(iterations), "max_iterations": str(max_iterations),
          "tolerance": repr(tolerance), "starts": str(starts), "problem": problem, "optimizer": optimizer,
          "dtype": dtype, "diff_method": diff_method}
    if preset:
        hp.update(workload.PRESETS[preset.lower()])
        if iterations is not None:
            hp["iterations"] = str(iterations)
    if stepsize is not None:
        hp["stepsize"] = repr(stepsize)
    workload.parse_settings(hp)  # fail here, in one line, not inside the job
    kwargs = {"device": dev, "source_module": str(Path(workload.__file__)), "entry_point": "qaoa",
              "job_name": name, "hyperparameters": hp, "backend": backend, "address": address,
              "instance_config": InstanceConfig(instanceType=options.instance_for(dev, instance)),
              "max_cost": max_cost}
    if graph:
        if not Path(graph).is_file():
            raise SpecError(f"--graph {graph!r}: no such file (node-link JSON or an edge list)")
        kwargs["input_data"] = {"input-graph": graph}
    return kwargs


def progress_spec(hp: dict):
    """The live display: the energy, the depth of the stage, seconds per iteration."""
    from qhybrid.cli.workload import ProgressSpec

    total = None if hp["iterations"] == "auto" else int(hp["iterations"])
    return ProgressSpec(total=total, show={"energy": "energy {:.4f}", "layers": "p={:.0f}",
                              "iteration_seconds": "{:.3f} s"},
                        unit="iteration", first=0)


TIMING_NOTE = ("--preset seed-timing reproduces the seed's timing study ({steps} Adam steps from its fixed start, "
               "one start): it measures time, it does not solve the graph, and the cut above is not an answer. "
               "Solve it with `qhybrid qaoa` (no preset: runs to convergence).")


def show_result(result: dict, *, hp: dict | None = None) -> None:
    """The answer in words, then the numbers behind it (``hp``: the job's hyperparameters, for what an
    iteration was and whether this was the timing preset)."""
    from collections import Counter

    from qhybrid.cli import output
    from qhybrid.workloads.qaoa import TOP_K

    stages = Counter(result.get("layers", []))
    its = ", ".join(f"p={p}: {n}" for p, n in sorted(stages.items()))
    conv = result.get("converged") or []
    secs = result.get("iteration_seconds") or []
    output.para(result["summary"], style="bold")
    hp = hp or {}
    if hp.get("init") == "seed":  # only the preset starts from the seed's parameters
        output.para(TIMING_NOTE.format(steps=hp.get("iterations", "5")), style="yellow")
    starts = int(hp.get("starts", 1))
    each = f"; each a step of all {starts} starts" if starts > 1 else ""
    output.pairs([
        ("best bitstring", f"{result['best_bitstring']}  (p {result['best_probability']:.4f}, "
                           f"best of the {TOP_K} likeliest)"),
        ("energy <C>", f"{result['energy']:.4f}  (optimum {result['optimum']:g})"),
        ("approximation ratio", f"{result['approximation_ratio']:.3f} expectation, "
                                f"{result['best_approximation_ratio']:.3f} best bitstring"),
        ("iterations", f"{result['iterations']} ({its}; "
                       f"{'converged' if conv and all(conv) else 'iteration cap reached' if conv else 'fixed'}{each})"),
        ("time", f"{sum(secs):.2f} s optimising" + (f" (first iteration {secs[0]:.2f} s)" if secs else "")),
    ])


def qaoa(
    nodes: Annotated[int, typer.Option(help="Graph nodes = qubits.")] = 18,
    edges: Annotated[int, typer.Option(help="Graph edges (gnm_random_graph(nodes, edges, seed)).")] = 24,
    layers: Annotated[int, typer.Option("--layers", "-p", help="QAOA depth p.")] = 2,
    iterations: Annotated[Optional[int], typer.Option(
        help="Exactly N iterations at depth p (default: to convergence, layer by layer); an iteration "
                    "is one optimizer step of all the starts.")] = None,
    max_iterations: Annotated[int, typer.Option(
        help="Iteration cap per depth when running to convergence.")] = 300,
    tolerance: Annotated[float, typer.Option(
        help="Converged when the energy improves by less than this over 10 iterations.")] = 1e-3,
    starts: Annotated[int, typer.Option(
        help="Parameter sets optimised together (batched); the best is kept.")] = 4,
    stepsize: Annotated[Optional[float], typer.Option(help="Adam step size (default 0.05; 0.1 in seed-timing).")] = None,
    seed: options.Seed = 1967,
    problem: Annotated[Literal["maxcut", "maxclique"], typer.Option(
        case_sensitive=False, help="Max-Cut or (unconstrained) Max-Clique.")] = "maxcut",
    optimizer: Annotated[Literal["adam", "sgd"], typer.Option(case_sensitive=False, help="Optimizer.")] = "adam",
    dtype: options.Dtype = "complex128",
    diff_method: Annotated[str, typer.Option(help="Gradient method on local:pennylane/* devices.")] = "adjoint",
    graph: Annotated[Optional[str], typer.Option(
        metavar="FILE", help="A graph file (node-link JSON, or an edge list 'i j [w]') instead of gnm.")] = None,
    preset: Annotated[Optional[Literal["seed-timing"]], typer.Option(
        case_sensitive=False, help="seed-timing: reproduces the seed's timing study (5 Adam steps from its "
                                   "start, one start): a timing, not a solver; its cut is not an answer.")] = None,
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
    """Solve Max-Cut (or Max-Clique) with QAOA on a random graph, as a job.

    Runs to convergence by default: depth 1 from the best of a grid, then each depth from the
    INTERP extension of the last (and a linear ramp), several starts at once, the best kept.
    Ends with the cut found against the exact optimum, and what the run costs.
    """
    from functools import partial

    from qhybrid.cli.workload import exit_with, submit_and_wait

    kwargs = job_kwargs(nodes=nodes, edges=edges, layers=layers, iterations=iterations,
                        max_iterations=max_iterations, tolerance=tolerance, starts=starts, stepsize=stepsize,
                        seed=seed, problem=problem, optimizer=optimizer, dtype=dtype, diff_method=diff_method,
                        graph=graph, preset=preset, device=device, instance=instance, name=name,
                        backend=backend, address=address, max_cost=max_cost)
    if dry_run:
        return dryrun.dry_run(kwargs, json_output=json_)
    exit_with(submit_and_wait({**kwargs, "force": force}, json_output=json_,
                              progress=progress_spec(kwargs["hyperparameters"]),
                              show=partial(show_result, hp=kwargs["hyperparameters"]), quiet=quiet))


def register(app: typer.Typer) -> None:
    """Add the ``qaoa`` command."""
    app.command("qaoa", no_args_is_help=False)(qaoa)
