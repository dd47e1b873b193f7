"""The seed-style Max-Clique QAOA QNode (``examples/qaoa_max_clique.py``): one Adam step on
qhybrid.cpu against lightning.qubit, side by side (not part of CI).

Two ways, both alternating the devices so that a busy spell on these shared machines falls on
both:

- ``--jobs`` (default): the example runs as local jobs (``qhybrid run`` with the device string
  swapped), ``--rounds`` jobs per device, taking turns; a job's per-step time is the median
  of its steps after the first (the first plans the circuit and loads kernels), the figure the
  median over its jobs.
- ``--in-process``: both QNodes in this process, one step each in turn, ``--steps`` steps;
  median after one warm-up step each.

Prints a markdown table (ms per step, ratio = lightning / qhybrid, the costs agreeing) and
the load average before and after::

    python benchmarks/qaoa_qnode.py                        # 16 nodes, p = 3, as jobs
    python benchmarks/qaoa_qnode.py --in-process --steps 7
    python benchmarks/qaoa_qnode.py --nodes 12 --edges 20 --layers 2
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "qaoa_max_clique.py"
DEVICES = ("local:qhybrid/qhybrid.cpu", "local:pennylane/lightning.qubit")


def as_jobs(args) -> dict:
    """Per device: (per-step seconds of each job, final costs)."""
    from qhybrid import Job

    hp = {"n_nodes": str(args.nodes), "n_edges": str(args.edges), "n_layers": str(args.layers),
          "iterations": str(args.steps), "seed": str(args.seed)}
    out = {d: ([], []) for d in DEVICES}
    with tempfile.TemporaryDirectory() as home:
        os.environ["QHYBRID_HOME"] = home
        for _ in range(args.rounds):
            for d in DEVICES:
                result = Job.create(d, str(EXAMPLE), hyperparameters=hp).wait(timeout=3600, poll=0.2).result()
                out[d][0].append(statistics.median(result["step_seconds"][1:]))
                out[d][1].append(result["cost"])
    return out


def in_process(args) -> dict:
    """Per device: (seconds of each step after the first, final costs), steps taking turns."""
    import pennylane as qml

    sys.path.insert(0, str(EXAMPLE.parent))
    from qaoa_max_clique import cost_qnode, start

    runs = {}
    for d in DEVICES:
        dev = qml.device(d.rpartition("/")[2], wires=args.nodes)
        cost, _ = cost_qnode(dev, n_nodes=args.nodes, n_edges=args.edges, n_layers=args.layers, seed=args.seed)
        runs[d] = [cost, start(args.layers, args.seed), qml.AdamOptimizer(stepsize=0.1)]
    out = {d: ([], []) for d in DEVICES}
    for i in range(args.steps):
        for d, run in runs.items():
            gc.collect()
            gc.disable()
            t0 = time.perf_counter()
            run[1], _ = run[2].step_and_cost(run[0], run[1])
            dt = time.perf_counter() - t0
            gc.enable()
            if i:
                out[d][0].append(dt)
    for d, run in runs.items():
        out[d][1].append(float(run[0](run[1])))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=16)
    parser.add_argument("--edges", type=int, default=30)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1967)
    parser.add_argument("--steps", type=int, default=5, help="Adam steps per job (or in all, --in-process)")
    parser.add_argument("--rounds", type=int, default=3, help="jobs per device (--jobs)")
    parser.add_argument("--in-process", action="store_true", help="both QNodes in this process")
    args = parser.parse_args(argv)
    if args.steps < 2:
        parser.error(f"--steps {args.steps}: at least 2 (the first step is not timed)")
    load = os.getloadavg()[0]
    out = in_process(args) if args.in_process else as_jobs(args)
    (ours, c_ours), (peer, c_peer) = (out[d] for d in DEVICES)
    mode = "in one process, steps taking turns" if args.in_process else f"as jobs, {args.rounds} per device, taking turns"
    print(f"## Max-Clique QAOA QNode, {args.nodes} nodes, {args.edges} edges, p = {args.layers}, Adam, adjoint\n")
    print(f"- {mode}; load average {load:.2f} before, {os.getloadavg()[0]:.2f} after (two shared cores)\n")
    print("| qhybrid.cpu ms/step | lightning.qubit ms/step | ratio | final cost ours | final cost peer |")
    print("|---|---|---|---|---|")
    o, p = statistics.median(ours), statistics.median(peer)
    print(f"| {o * 1e3:.1f} | {p * 1e3:.1f} | {p / o:.2f}x | {c_ours[-1]:.10f} | {c_peer[-1]:.10f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
