"""A 20-qubit engine call with one busy process beside it: qhybrid.cpu against lightning.qubit.

Issue 14 ("shared machines"): with one busy process on the machine, our call must not slow
down by more than lightning.qubit's does in the same conditions. Each round times both
devices alone, then starts one busy process (``python -c "while True: pass"``), times both
again and stops it; rounds repeat ``--rounds`` times so that a busy spell of the (shared)
machine falls on every column. One call = energy + adjoint gradient of the layered circuit
(3 layers of RX/RY/RZ on every wire + a CNOT ring, <Z0>) through a QNode; ``--forward`` times
the forward pass alone. Slowdown = median with the busy process / median alone.

``OMP_WAIT_POLICY=PASSIVE`` is set before anything loads, as the job runtime does.

Usage::

    python benchmarks/contention.py                 # 20 qubits, 5 rounds
    python benchmarks/contention.py --wires 18 --rounds 3 --forward
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
import pennylane as qml  # noqa: E402
from pennylane import numpy as pnp  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from engine import layered_workload, timed  # noqa: E402


def calls(name: str, n: int, forward: bool):
    """The timed callable on device ``name`` (warmed up) and its first result."""
    circuit, x0 = layered_workload(n)
    qnode = qml.QNode(circuit, qml.device(name, wires=n), diff_method="adjoint")
    x = pnp.array(x0, requires_grad=True)
    fn = (lambda: qnode(x)) if forward else (lambda g=qml.grad(qnode): g(x))
    return fn, np.asarray(fn())


def busy() -> subprocess.Popen:
    """One process spinning on a core until stopped."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--wires", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--forward", action="store_true", help="time the forward pass alone")
    parser.add_argument("--peer", default="lightning.qubit")
    args = parser.parse_args(argv)

    devices = ["qhybrid.cpu", args.peer]
    fns, results = zip(*(calls(d, args.wires, args.forward) for d in devices))
    diff = float(np.max(np.abs(results[0] - results[1])))
    times = {(d, c): [] for d in devices for c in ("alone", "busy")}
    for _ in range(args.rounds):
        for cond in ("alone", "busy"):
            proc = busy() if cond == "busy" else None
            try:
                if proc is not None:
                    time.sleep(0.5)  # the busy process at full speed before the clock starts
                for d, fn in zip(devices, fns):
                    times[(d, cond)].append(timed(fn))
            finally:
                if proc is not None:
                    proc.kill()
                    proc.wait()
    load = os.getloadavg()
    what = "forward" if args.forward else "energy + gradient"
    print(f"## {args.wires} qubits, layered circuit, {what}, median of {args.rounds} rounds, "
          f"OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}, {os.cpu_count()} cores, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, max |Δ| {diff:.1e}\n")
    print("| device | alone s | one busy process s | slowdown |")
    print("|---|---|---|---|")
    for d in devices:
        a, b = statistics.median(times[(d, "alone")]), statistics.median(times[(d, "busy")])
        print(f"| {d} | {a:.3f} | {b:.3f} | {b / a:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
