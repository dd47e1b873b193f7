"""Two source trees of qhybrid side by side on the CPU paths, calls alternating (not part of CI).

For a refactor that must not cost time (e.g. the kernel-set object, issue 24): one worker
process per tree (``PYTHONPATH=<tree>/src``), both alive for the whole run; the parent asks
them in turn for one timed call of the same workload (A, B, A, B, ...), so both see the same
load on shared cores, and reports each side's median and the ratio new / old. The workloads
are those of ``benchmarks/engine.py`` (an energy + adjoint gradient through a ``qhybrid.cpu``
QNode, ``small_wires=0`` where the tree has it: the engine, not the numpy path of small circuits), ``benchmarks/qaoa.py`` (``QAOA.energy_and_grad``) and ``benchmarks/qml.py`` (one
``QuantumLayer`` forward + backward on a batch), at small sizes; each worker builds them from
its own tree. ``--numpy`` times the numpy path of small circuits instead (:mod:`qhybrid.sim.small`):
the layered circuit of ``benchmarks/engine.py`` (RX, RY, RZ on every wire and a CNOT ring, three
times)'s forward pass unbatched at 2, 8 and 12 wires and batched (4 rows) at 8, and its value +
adjoint gradient through a ``qhybrid.cpu`` QNode at 4 and 12 wires (the switch to the engine
after 2 s turned off); a timed call is as many calls in a row as its label says.

Usage::

    python benchmarks/ab_trees.py --old /work/main --new . --repeats 15
    python benchmarks/ab_trees.py --old /work/main --new . --repeats 31 --numpy
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

#: (label, kind, size): engine QNodes (sel / qaoa / ham), QAOA sweeps, QML layer steps.
CASES = [("engine sel n=12", "sel", 12), ("engine qaoa n=14", "qaoa_qnode", 14), ("engine ham n=12", "ham", 12),
         ("qaoa n=16 p=2", "qaoa", 16), ("qaoa n=20 p=2", "qaoa", 20),
         ("qml n=10 B=16", "qml", 10), ("qml n=14 B=16", "qml", 14)]
#: the numpy path (``--numpy``): label, kind, size; the label says how many calls a timed call is
NUMPY_CASES = [("numpy fwd n=2 (x400)", "small_fwd", 2), ("numpy fwd n=8 (x100)", "small_fwd", 8),
               ("numpy fwd n=12 (x20)", "small_fwd", 12), ("numpy fwd n=8 B=4 (x20)", "small_fwd_b4", 8),
               ("numpy qnode value+grad n=4 (x20)", "small_qnode", 4),
               ("numpy qnode value+grad n=12 (x5)", "small_qnode", 12)]

_WORKER = r'''
import gc, json, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1] + "/benchmarks")

def repeated(f, reps):
    def run():
        for _ in range(reps):
            f()
    return run


def build(kind, n):
    if kind in ("small_fwd", "small_fwd_b4", "small_qnode"):
        import engine
        circuit, x0 = engine.layered_workload(n)
        if kind == "small_qnode":
            import pennylane as qml
            from pennylane import numpy as pnp
            import qhybrid.plugin.paths as paths
            paths.SWITCH_SECONDS = float("inf")  # stay on the numpy path however long the run
            node = qml.QNode(circuit, qml.device("qhybrid.cpu", wires=n), diff_method="adjoint")
            x = pnp.array(x0, requires_grad=True)
            return repeated(lambda: (node(x), qml.grad(node)(x)), {4: 20, 12: 5}[n])
        from qhybrid.sim import small
        from qhybrid.sim.circuit import Circuit, Operation
        c = engine.layered_engine_circuit(n, x0)
        if kind == "small_fwd_b4":  # each angle a batch of 4
            c = Circuit(n, tuple(Operation(o.name, o.wires, (o.params[0] + 0.1 * np.arange(4),)) if o.params else o
                                 for o in c.operations), c.measurements)
            return repeated(lambda: small.final_state(c), 20)
        return repeated(lambda: small.final_state(c), {2: 400, 8: 100, 12: 20}[n])
    if kind in ("sel", "qaoa_qnode", "ham"):
        import pennylane as qml
        from pennylane import numpy as pnp
        import engine
        make = {"sel": engine.sel_workload, "qaoa_qnode": engine.qaoa_workload, "ham": engine.ham_workload}[kind]
        circuit, x0 = make(n)
        try:  # the engine path: newer trees run small circuits on numpy until it has spent 2 s on them
            dev = qml.device("qhybrid.cpu", wires=n, small_wires=0)
        except Exception:  # a tree before small_wires: always the engine
            dev = qml.device("qhybrid.cpu", wires=n)
        node = qml.QNode(circuit, dev, diff_method="adjoint")
        x = pnp.array(x0, requires_grad=True)
        return lambda: qml.grad(node)(x)
    if kind == "qaoa":
        import networkx as nx
        from qhybrid.qaoa import QAOA
        q = QAOA(nx.gnm_random_graph(n, int(1.5 * n), seed=1967))
        x = np.full((2, 2), 0.5)
        return lambda: q.energy_and_grad(x)
    if kind == "qml":
        import torch
        from qhybrid.qml import QuantumLayer
        layer = QuantumLayer(n, generator=torch.Generator().manual_seed(1))
        x = torch.rand((16, n), dtype=torch.float64, generator=torch.Generator().manual_seed(2))
        return lambda: layer(x).sum().backward()
    raise ValueError(kind)

runs = {}
for line in sys.stdin:
    kind, n = line.split()
    key = (kind, int(n))
    if key not in runs:
        runs[key] = build(kind, int(n))
        runs[key]()  # warm-up (compiles)
    f = runs[key]
    f()  # the timed call is the second of two in a row (steady state after the other side's turn)
    gc.disable()
    t = time.perf_counter()
    f()
    dt = time.perf_counter() - t
    gc.enable()
    print(json.dumps(dt), flush=True)
'''


def _worker(tree: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    return subprocess.Popen([sys.executable, "-c", _WORKER, str(tree)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=env)


def _call(proc: subprocess.Popen, kind: str, n: int) -> float:
    proc.stdin.write(f"{kind} {n}\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    if not line:
        raise RuntimeError(f"worker for {kind} {n} died")
    return json.loads(line)


def main(argv=None) -> int:
    """Run every case on both trees, alternating; print a markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="the reference tree (e.g. /work/main)")
    parser.add_argument("--new", type=Path, default=Path("."))
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--only", default="", help="comma-separated substrings of case labels")
    parser.add_argument("--numpy", action="store_true", help="the numpy path's cases instead (no torch)")
    args = parser.parse_args(argv)
    old, new = _worker(args.old.resolve()), _worker(args.new.resolve())
    print("| case | old (ms) | new (ms) | new / old |\n| --- | ---: | ---: | ---: |", flush=True)
    try:
        for label, kind, n in (NUMPY_CASES if args.numpy else CASES):
            if args.only and not any(s in label for s in args.only.split(",")):
                continue
            t_old, t_new = [], []
            for r in range(args.repeats):  # alternate which side goes first
                pair = ((old, t_old), (new, t_new)) if r % 2 == 0 else ((new, t_new), (old, t_old))
                for proc, out in pair:
                    out.append(_call(proc, kind, n))
            a, b = statistics.median(t_old), statistics.median(t_new)
            print(f"| {label} | {a * 1e3:.3f} | {b * 1e3:.3f} | {b / a:.3f} |", flush=True)
    finally:
        for proc in (old, new):
            proc.stdin.close()
            proc.wait(timeout=60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
