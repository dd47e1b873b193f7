"""A 20-qubit engine call with one busy process beside it: qhybrid.cpu against lightning.qubit.

Issue 14 ("shared machines"): with one busy process on the machine, our call must not slow
down by more than lightning.qubit's does in the same conditions. One busy process
(``python -c "while True: pass"``) runs for the whole benchmark, stopped (SIGSTOP) and resumed
(SIGCONT) around the calls it should slow, so that a call alone and a call beside it are
seconds apart: on a shared machine the background load drifts, and only a pair of neighbouring
calls sees the same. Each round times every device alone, beside, beside, alone (ABBA: a linear
drift cancels), devices taking turns; a device's slowdown per round = its mean beside / its mean
alone, and the table gives the median and range over ``--rounds``. One call = energy + adjoint
gradient of the layered circuit (3 layers of RX/RY/RZ on every wire + a CNOT ring, <Z0>) through
a QNode; ``--forward`` times the forward pass alone. ``--threads 1,2,3`` adds a qhybrid.cpu
column per thread count (the device's ``threads=``; counts above the cores need
``NUMBA_NUM_THREADS`` set that high).

``OMP_WAIT_POLICY=PASSIVE`` is set before anything loads, as the job runtime does.

Usage::

    python benchmarks/contention.py                 # 20 qubits, 5 rounds
    python benchmarks/contention.py --wires 18 --rounds 3 --forward
    NUMBA_NUM_THREADS=4 python benchmarks/contention.py --threads 1,2,3,4
"""
from __future__ import annotations

import argparse
import os
import signal
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

SETTLE_S = 0.05  # after SIGCONT: the busy process back on a core before the clock starts


def calls(name: str, n: int, forward: bool, **options):
    """The timed callable on device ``name`` (warmed up) and its first result."""
    circuit, x0 = layered_workload(n)
    qnode = qml.QNode(circuit, qml.device(name, wires=n, **options), diff_method="adjoint")
    x = pnp.array(x0, requires_grad=True)
    fn = (lambda: qnode(x)) if forward else (lambda g=qml.grad(qnode): g(x))
    return fn, np.asarray(fn())


def busy() -> subprocess.Popen:
    """One process spinning on a core until killed, stopped until :func:`beside` resumes it."""
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    os.kill(proc.pid, signal.SIGSTOP)
    return proc


def beside(proc: subprocess.Popen, fn) -> float:
    """``timed(fn)`` with the busy process running."""
    os.kill(proc.pid, signal.SIGCONT)
    try:
        time.sleep(SETTLE_S)
        return timed(fn)
    finally:
        os.kill(proc.pid, signal.SIGSTOP)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--wires", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--forward", action="store_true", help="time the forward pass alone")
    parser.add_argument("--peer", default="lightning.qubit")
    parser.add_argument("--threads", default="", help="qhybrid.cpu thread counts, e.g. 1,2,3 (default: its own)")
    args = parser.parse_args(argv)

    columns = {"qhybrid.cpu": ("qhybrid.cpu", {})}
    for t in filter(None, args.threads.split(",")):
        columns[f"qhybrid.cpu threads={int(t)}"] = ("qhybrid.cpu", {"threads": int(t)})
    columns[args.peer] = (args.peer, {})
    fns, results = {}, []
    for label, (name, options) in columns.items():
        fns[label], result = calls(name, args.wires, args.forward, **options)
        results.append(result)
    diff = max(float(np.max(np.abs(r - results[0]))) for r in results)
    times = {(label, c): [] for label in columns for c in ("alone", "busy")}
    ratios = {label: [] for label in columns}
    loads = [os.getloadavg()]
    proc = busy()
    try:
        for _ in range(args.rounds):
            for label, fn in fns.items():
                a1 = timed(fn)
                b1, b2 = beside(proc, fn), beside(proc, fn)
                a2 = timed(fn)
                times[(label, "alone")] += [a1, a2]
                times[(label, "busy")] += [b1, b2]
                ratios[label].append((b1 + b2) / (a1 + a2))
            loads.append(os.getloadavg())
    finally:
        proc.kill()
        proc.wait()
    what = "forward" if args.forward else "energy + gradient"
    one_minute = " ".join(f"{load[0]:.1f}" for load in loads)
    print(f"## {args.wires} qubits, layered circuit, {what}, {args.rounds} rounds (ABBA), "
          f"OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}, {os.cpu_count()} cores, "
          f"1-minute load average before and after each round: {one_minute}, max |Δ| {diff:.1e}\n")
    print("| device | alone s | one busy process s | slowdown (median of rounds) | range |")
    print("|---|---|---|---|---|")
    for label in columns:
        a, b = statistics.median(times[(label, "alone")]), statistics.median(times[(label, "busy")])
        r = ratios[label]
        print(f"| {label} | {a:.3f} | {b:.3f} | {statistics.median(r):.2f}x | {min(r):.2f}-{max(r):.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
