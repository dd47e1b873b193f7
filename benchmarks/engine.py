"""qhybrid's engine against lightning.qubit, side by side in one run (not part of CI).

Three workloads, each one energy + adjoint gradient through a PennyLane QNode:

- ``sel``:  StronglyEntanglingLayers (3 layers), expval(Z0), at 16 and 20 qubits;
- ``qaoa``: QAOA Max-Cut (``qml.qaoa.maxcut``), p=2, on gnm(n, 1.5 n, seed=1967),
  n = 16, 18, 20, 22 (target: 10x lightning at n=22);
- ``ham``:  200 random Pauli words on 20 qubits, hardware-efficient ansatz
  (target: 10x).

For each size: one warm-up call, then the median of ``--repeats`` timed calls, for
qhybrid and for the peer in the same process, the two devices taking turns, and
the ratio peer / qhybrid. A timed call is the second of two in a row (the device
back in its steady state after the other's turn) with the garbage collector off,
as ``timeit`` does (see :func:`timed`).
A device whose time at the next size is predicted past its budget
(``--peer-budget`` for the peer, ``--budget`` for qhybrid) is skipped there;
a first call slower than a third of the budget is reported as one run. The table goes to stdout (markdown), the rows to
``benchmarks/out/engine.csv``. The two cores of our machines are shared, so
absolute times are noisy; ratios measured in one run are what count.

Usage::

    python benchmarks/engine.py                      # full run (several minutes)
    python benchmarks/engine.py --quick              # small sizes, seconds
    python benchmarks/engine.py --small --repeats 21 # per-call cost at 8-14 qubits, forward and gradient
    python benchmarks/engine.py --only qaoa --repeats 5
    python benchmarks/engine.py --device qhybrid.gpu --dtype complex64
    python benchmarks/engine.py --qsim --repeats 5   # forward, engine vs qsim at 20-24 qubits
    python benchmarks/engine.py --shots --repeats 5  # sample / counts / expval, 10-100,000 shots, 4-20 qubits

``--shots``: see ``benchmarks/engine_shots.py``.

``--qsim``: the layered circuit's forward pass and <Z0> on the engine itself
(:func:`qhybrid.sim.simulate`, no PennyLane) against Google's qsim (``qsimcirq``, installed
for the benchmark only), complex64, both on every core, calls alternating.
"""
from __future__ import annotations

import argparse
import csv
import gc
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import networkx as nx
import numpy as np
import pennylane as qml
from pennylane import numpy as pnp

OUT = Path(__file__).resolve().parent / "out" / "engine.csv"
SIZES = {"sel": [16, 20], "qaoa": [16, 18, 20, 22], "ham": [20]}
QUICK_SIZES = {"sel": [8, 10], "qaoa": [8, 10, 12], "ham": [10]}
TARGETS = {("qaoa", 22): 10.0, ("ham", 20): 10.0}


# ---------------------------------------------------------------- workloads
# Each builder returns (qnode factory taking a device, initial trainable parameters).

def sel_workload(n: int, *, seed: int = 1967):
    """StronglyEntanglingLayers, 3 layers, expval(Z0)."""
    shape = qml.StronglyEntanglingLayers.shape(n_layers=3, n_wires=n)
    weights = np.random.default_rng(seed).uniform(0, 2 * np.pi, size=shape)

    def circuit(w):
        qml.StronglyEntanglingLayers(w, wires=range(n))
        return qml.expval(qml.PauliZ(0))

    return circuit, weights


def qaoa_workload(n: int, *, p: int = 2, seed: int = 1967):
    """QAOA Max-Cut, p layers, on gnm_random_graph(n, int(1.5 n), seed)."""
    from qhybrid.qaoa.pennylane import ansatz, hamiltonians

    graph = nx.gnm_random_graph(n, int(1.5 * n), seed=seed)
    cost_h, mixer_h = hamiltonians(graph)

    def circuit(params):
        ansatz(params, cost_h, mixer_h, n)
        return qml.expval(cost_h)

    return circuit, np.full((2, p), 0.5)


def random_pauli_hamiltonian(n: int, terms: int, *, seed: int = 1967):
    """``terms`` Pauli words of weight 1..6 on random wires, normal coefficients."""
    rng = np.random.default_rng(seed)
    coeffs, words = [], []
    for _ in range(terms):
        k = int(rng.integers(1, min(6, n) + 1))
        wires = rng.choice(n, size=k, replace=False)
        word = qml.prod(*[getattr(qml, "Pauli" + str(c))(int(w))
                          for c, w in zip(rng.choice(list("XYZ"), size=k), wires)])
        coeffs.append(float(rng.normal()))
        words.append(word)
    return qml.Hamiltonian(coeffs, words)


def ham_workload(n: int, *, terms: int = 200, layers: int = 3, seed: int = 1967):
    """expval of a random Pauli-word Hamiltonian after a hardware-efficient ansatz."""
    h = random_pauli_hamiltonian(n, terms, seed=seed)
    params = np.random.default_rng(seed + 1).uniform(-np.pi, np.pi, size=(layers, n, 2))

    def circuit(x):
        for layer in range(layers):
            for w in range(n):
                qml.RY(x[layer, w, 0], wires=w)
                qml.RZ(x[layer, w, 1], wires=w)
            for w in range(n - 1):
                qml.CNOT([w, w + 1])
        return qml.expval(h)

    return circuit, params


def layered_workload(n: int, *, layers: int = 3, seed: int = 1967):
    """3 layers of RX/RY/RZ on every wire + a CNOT ring, expval(Z0): the small-circuit case,
    where per-call overhead (preprocessing, conversion) decides rather than kernels."""
    x0 = np.random.default_rng(seed).uniform(0, 2 * np.pi, size=(layers, n, 3))

    def circuit(x):
        for layer in range(layers):
            for w in range(n):
                qml.RX(x[layer, w, 0], w)
                qml.RY(x[layer, w, 1], w)
                qml.RZ(x[layer, w, 2], w)
            for w in range(n):
                qml.CNOT([w, (w + 1) % n])
        return qml.expval(qml.PauliZ(0))

    return circuit, x0


WORKLOADS = {"sel": sel_workload, "qaoa": qaoa_workload, "ham": ham_workload}
SMALL_SIZES = [8, 10, 12, 14]
STATS = {"median": statistics.median, "min": min}


def small_table(args, c_dtype) -> None:
    """Per-call cost at 8-14 qubits through a QNode: a forward call (parameters not trainable:
    ``Device.execute``) and energy + gradient (``qml.grad``: ``execute_and_compute_derivatives``),
    ours and the peer's taking turns (:func:`interleaved_medians`), ratio = peer / ours."""
    print(f"- load average before: {os.getloadavg()[0]:.2f} (two shared cores)\n")
    print("| n | forward ours ms | forward peer ms | ratio | e+grad ours ms | e+grad peer ms | ratio | max |Δ| |")
    print("|---|---|---|---|---|---|---|---|")
    for n in SMALL_SIZES:
        circuit, x0 = layered_workload(n)
        x = pnp.array(x0, requires_grad=True)
        fixed = pnp.array(x0, requires_grad=False)
        calls, checks = [], []
        for name in (args.device, args.peer):
            qnode = qml.QNode(circuit, make_device(name, n, c_dtype), diff_method="adjoint")
            grad = qml.grad(qnode)
            calls += [lambda q=qnode: q(fixed), lambda g=grad: g(x)]
            checks.append((float(qnode(fixed)), np.asarray(grad(x))))
        fo, go, fp, gp = interleaved_medians(calls, [args.repeats] * 4, stat=STATS[args.stat])
        diff = max(abs(checks[0][0] - checks[1][0]), float(np.max(np.abs(checks[0][1] - checks[1][1]))))
        print(f"| {n} | {fo * 1e3:.2f} | {fp * 1e3:.2f} | {fp / fo:.2f}x | {go * 1e3:.2f} | {gp * 1e3:.2f} | "
              f"{gp / go:.2f}x | {diff:.1e} |")
        sys.stdout.flush()
    print(f"\n- load average after: {os.getloadavg()[0]:.2f}")


QSIM_SIZES = [20, 22, 24]


def layered_engine_circuit(n: int, x):
    """The layered circuit (:func:`layered_workload`) as an engine circuit measuring <Z0>."""
    from qhybrid.sim import Circuit, Measurement, Observable, Operation

    ops = []
    for layer in range(x.shape[0]):
        for w in range(n):
            ops += [Operation(g, (w,), (float(x[layer, w, k]),)) for k, g in enumerate(("RX", "RY", "RZ"))]
        ops += [Operation("CNOT", (w, (w + 1) % n)) for w in range(n)]
    return Circuit(n, tuple(ops), (Measurement("expval", Observable.pauli({"Z": 1.0}, wires=(0,))),))


def layered_qsim_circuit(n: int, x):
    """The same circuit in cirq for qsim (cirq's rotations are ours: exp(-i theta P / 2))."""
    import cirq

    q = cirq.LineQubit.range(n)
    c = cirq.Circuit()
    for layer in range(x.shape[0]):
        for w in range(n):
            c.append([cirq.rx(x[layer, w, 0])(q[w]), cirq.ry(x[layer, w, 1])(q[w]), cirq.rz(x[layer, w, 2])(q[w])])
        c.append(cirq.CNOT(q[w], q[(w + 1) % n]) for w in range(n))
    return c, q


def qsim_table(args) -> None:
    """Forward pass + <Z0> of the layered circuit in complex64, the engine against qsim."""
    import cirq
    import qsimcirq
    import torch

    from qhybrid.sim import Cache, simulate

    threads = os.cpu_count() or 1
    print("| n | ours ms | qsim ms | qsim / ours | <Z0> ours | <Z0> qsim |")
    print("|---|---|---|---|---|---|")
    for n in QSIM_SIZES:
        x = layered_workload(n)[1]
        circuit = layered_engine_circuit(n, x)
        cache = Cache()
        ours = lambda: float(simulate(circuit, dtype=torch.complex64, cache=cache)[0][0])  # noqa: E731
        c, q = layered_qsim_circuit(n, x)
        sim = qsimcirq.QSimSimulator(qsimcirq.QSimOptions(cpu_threads=threads))
        z0 = [cirq.Z(q[0])]
        peer = lambda: float(np.real(sim.simulate_expectation_values(c, z0)[0]))  # noqa: E731
        e_ours, e_peer = ours(), peer()
        t_ours, t_peer = interleaved_medians([ours, peer], [args.repeats] * 2)
        print(f"| {n} | {t_ours * 1e3:.1f} | {t_peer * 1e3:.1f} | {t_peer / t_ours:.2f}x | {e_ours:.6f} | {e_peer:.6f} |")
        sys.stdout.flush()


# ---------------------------------------------------------------- timing

def energy_and_gradient(circuit, device, params):
    """Two callables on ``device``: the timed one (``qml.grad``, which runs the forward
    pass and the adjoint sweep) and one returning ``(energy, gradient)`` for checking."""
    qnode = qml.QNode(circuit, device, diff_method="adjoint")
    x = pnp.array(params, requires_grad=True)
    grad_fn = qml.grad(qnode)

    def run():
        return grad_fn(x)

    def run_with_energy():
        return float(qnode(x)), np.asarray(grad_fn(x))

    return run, run_with_energy


def prepare(name: str, n: int, device):
    """The timed callable on ``device`` after its warm-up (energy + gradient, kept for checking).

    Returns:
        ``(run, energy, gradient, warm-up seconds)``.
    """
    circuit, params = WORKLOADS[name](n)
    run, run_with_energy = energy_and_gradient(circuit, device, params)
    t0 = time.perf_counter()
    energy, grad = run_with_energy()
    return run, energy, grad, time.perf_counter() - t0


def timed(fn, *, warm: bool = True) -> float:
    """Wall time of the second of two consecutive calls of ``fn``, the second as ``timeit`` takes
    it: the garbage of earlier calls collected first and the collector off during the call (a
    collection of the ~400k objects PennyLane, torch and numba keep alive costs ~0.2 s
    whichever device happens to trigger it). The first, untimed call brings the device back to
    the state a user's loop keeps it in (its buffers in cache, the other device's OpenMP
    workers asleep): right after the other device's calls our 20-qubit call took ~0.25 s, in
    a loop of its own ~0.18 s. Without ``warm`` (a device timed once, seconds a call) just the
    one call."""
    if warm:
        fn()
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
    finally:
        gc.enable()


def interleaved_medians(runs: list, repeats: list, stat=statistics.median) -> list:
    """Median wall time of each callable (:func:`timed`), the callables alternating round by
    round (``repeats[i]`` timings of ``runs[i]``, in the first rounds): a busy spell on these
    shared machines falls on both sides instead of on whichever was being timed. ``stat`` (the
    median by default; ``min`` for the cost when nothing else ran) sums each one's timings up."""
    times = [[] for _ in runs]
    for r in range(max(repeats, default=0)):
        for i, fn in enumerate(runs):
            if r < repeats[i]:
                times[i].append(timed(fn, warm=repeats[i] > 1))
    return [stat(t) if t else None for t in times]


class Budget:
    """Skips a device at sizes where its time per call, extrapolated from its last
    measured size as ``n 2**n``, would exceed ``seconds``."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.last = None  # (n, seconds)

    def predicted(self, n: int) -> float | None:
        if self.last is None:
            return None
        n0, t0 = self.last
        return t0 * 2.0 ** (n - n0) * n / n0

    def allows(self, n: int) -> bool:
        p = self.predicted(n)
        return p is None or p <= self.seconds


def pair(name, n, devices, c_dtype, args, budgets):
    """Ours and the peer at one size, timed interleaved: per device ``(seconds, energy, gradient,
    note)``, or Nones and a note when its budget skips it; after a warm-up slower than a third
    of its budget a device is timed once."""
    runs, reps, out = [], [], []
    for device_name, budget in zip(devices, budgets):
        if not budget.allows(n):
            out.append([None, None, None, f"{device_name} skipped (predicted {budget.predicted(n):.0f} s)"])
            continue
        run, energy, grad, warm = prepare(name, n, make_device(device_name, n, c_dtype))
        slow = warm > budget.seconds / 3
        runs.append(run)
        reps.append(1 if slow else args.repeats)
        out.append([len(runs) - 1, energy, grad, f"{device_name}: 1 run" if slow else ""])
    medians = interleaved_medians(runs, reps)
    for entry, budget in zip(out, budgets):
        if entry[0] is not None:
            entry[0] = medians[entry[0]]
            budget.last = (n, entry[0])
    return [tuple(e) for e in out]


# ---------------------------------------------------------------- reporting

def machine_info() -> list[str]:
    import torch

    lines = [f"python {platform.python_version()} on {platform.platform()}",
             f"cores: {os.cpu_count()}, torch threads: {torch.get_num_threads()}, "
             f"cuda: {torch.cuda.is_available()}"]
    from importlib.metadata import PackageNotFoundError, version

    versions = []
    for dist in ("torch", "numpy", "pennylane", "pennylane-lightning", "qhybrid"):
        try:
            versions.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            versions.append(f"{dist} (not installed)")
    lines.append(", ".join(versions))
    return lines


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "(not installed)"


def make_device(name: str, n: int, c_dtype):
    """``qml.device(name, wires=n, c_dtype=...)``; devices without ``c_dtype`` get none."""
    try:
        return qml.device(name, wires=n, c_dtype=c_dtype)
    except TypeError:
        return qml.device(name, wires=n)


def fmt(x, spec=".3f"):
    return "—" if x is None else format(x, spec)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--only", default="sel,qaoa,ham",
                        help="comma-separated subset of: " + ", ".join(WORKLOADS))
    parser.add_argument("--repeats", type=int, default=3, help="timed calls after the warm-up")
    parser.add_argument("--device", default="qhybrid.cpu", help="qhybrid.cpu or qhybrid.gpu")
    parser.add_argument("--dtype", default="complex128", choices=["complex128", "complex64"])
    parser.add_argument("--peer", default="lightning.qubit")
    parser.add_argument("--peer-budget", type=float, default=60.0,
                        help="skip the peer where its predicted time per call exceeds this (s)")
    parser.add_argument("--budget", type=float, default=120.0,
                        help="the same for qhybrid, so a slow engine cannot stall the run (s)")
    parser.add_argument("--csv", type=Path, default=OUT)
    parser.add_argument("--small", action="store_true",
                        help="only the 8-14 qubit per-call table (forward and energy + gradient)")
    parser.add_argument("--qsim", action="store_true",
                        help="only the forward pass against qsim at 20-24 qubits (complex64; needs qsimcirq)")
    parser.add_argument("--stat", choices=sorted(STATS), default="median",
                        help="--small: each call's median or best time (best: on a busy machine)")
    parser.add_argument("--shots", action="store_true", help="finite-shot measurements (engine_shots.py)")
    parser.add_argument("--shots-wires", default="4,8,12,16,20", help="--shots: wire counts")
    args = parser.parse_args(argv)

    only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = [s for s in only if s not in WORKLOADS]
    if unknown:
        parser.error(f"--only: unknown benchmark(s) {unknown}; valid: {', '.join(WORKLOADS)}")
    c_dtype = getattr(np, args.dtype)
    sizes = QUICK_SIZES if args.quick else SIZES
    for name in (args.device, args.peer):  # fail in one line, before any table, on a bad device
        try:
            make_device(name, 2, c_dtype)
        except Exception as exc:  # noqa: BLE001  (DeviceError, unknown device name, ...)
            print(f"engine.py: cannot create device {name!r}: {exc}", file=sys.stderr)
            return 2

    print("## qhybrid engine benchmark\n")
    for line in machine_info():
        print(f"- {line}")
    if args.qsim:
        print(f"- engine (qhybrid.sim.simulate) vs qsim {_version('qsimcirq')}, complex64, layered circuit "
              f"(3 x RX/RY/RZ + CNOT ring), forward + <Z0>, median of {args.repeats}, taking turns\n")
        qsim_table(args)
        return 0
    if args.shots:
        from engine_shots import shots_table

        print(f"- {args.device} vs {args.peer}, {args.dtype}, layered circuit, one forward call with shots, "
              f"{args.stat} of {args.repeats}, taking turns\n")
        shots_table(args, c_dtype, layered_workload=layered_workload, make_device=make_device,
                    interleaved_medians=interleaved_medians, stat=STATS[args.stat])
        return 0
    if args.small:
        print(f"- {args.device} vs {args.peer}, {args.dtype}, layered circuit (3 x RX/RY/RZ + CNOT ring), "
              f"{args.stat} of {args.repeats}, taking turns\n")
        small_table(args, c_dtype)
        return 0
    print(f"- device {args.device} vs {args.peer}, {args.dtype}, median of {args.repeats} "
          f"after one warm-up, the two devices taking turns, each timed call the second of two in a row, "
          f"collector off; one call = energy + adjoint gradient\n")
    header = ["benchmark", "n", f"{args.device} s", f"{args.peer} s", "ratio", "target",
              "energy", "max |Δ|", "note"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    sys.stdout.flush()

    rows = []
    for name in only:
        ours_budget, peer_budget = Budget(args.budget), Budget(args.peer_budget)
        for n in sizes[name]:
            (ours, e_ours, g_ours, note_ours), (peer_t, e_peer, g_peer, note_peer) = pair(
                name, n, (args.device, args.peer), c_dtype, args, (ours_budget, peer_budget))
            diff = None
            if ours is not None and peer_t is not None:
                diff = max(abs(e_ours - e_peer), float(np.max(np.abs(g_ours - g_peer))))
            ratio = None if ours is None or peer_t is None else peer_t / ours
            target = TARGETS.get((name, n))
            note = "; ".join(x for x in (note_ours, note_peer) if x)
            row = {"benchmark": name, "n": n, "device": args.device, "dtype": args.dtype,
                   "qhybrid_s": ours, "peer": args.peer, "peer_s": peer_t, "ratio": ratio,
                   "target": target, "max_abs_diff": diff, "energy": e_ours if e_ours is not None else e_peer,
                   "repeats": args.repeats, "note": note}
            rows.append(row)
            cells = [name, str(n), fmt(ours), fmt(peer_t), fmt(ratio, ".1f") + ("x" if ratio else ""),
                     fmt(target, ".0f") + ("x" if target else ""), fmt(row["energy"], ".6f"),
                     fmt(diff, ".1e"), note]
            print("| " + " | ".join(cells) + " |")
            sys.stdout.flush()

    args.csv.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.csv.with_suffix(".tmp")
    with open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["benchmark"])
        writer.writeheader()
        writer.writerows(rows)
    tmp.replace(args.csv)
    print(f"\nwrote {args.csv}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
