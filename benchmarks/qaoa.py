"""QAOA Max-Cut energy+gradient: qhybrid's fast path against PennyLane simulators, side by side.

For gnm(n, 1.5 n, seed=1967), n = 16..24 and p = 1, 2, 4, times one energy plus
gradient (adjoint) with: qhybrid's fast path (``qhybrid.qaoa.QAOA``), qhybrid's
PennyLane device (``qhybrid.cpu``, when installed), ``lightning.qubit`` and, at
n <= 12, ``default.qubit`` (it densifies the Hamiltonian). A peer whose last point took longer than
``--budget`` seconds is skipped at larger n. Prints a markdown table (time, speed-up
over lightning.qubit), the memory-bandwidth floor (bytes the fused algorithm
must move / bandwidth of a large torch copy measured in the same run) and how
far above it qhybrid is; writes ``benchmarks/out/qaoa.csv`` and ``qaoa.png``.

    python benchmarks/qaoa.py                      # n = 16..24, p = 1, 2, 4
    python benchmarks/qaoa.py --quick              # n = 16, 20, p = 2
    python benchmarks/qaoa.py --qubits 20 24 --layers 2 --budget 120

``check_qaoa(ctx)`` and ``time_qaoa(ctx)`` are the sections of
``benchmarks/gpu_check.py`` (torch only: no PennyLane, no networkx needed).
Timings here are wall-clock on whatever else the machine runs: ratios measured
in one run are what count.
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as the QAOA job does: idle OpenMP threads sleep

import argparse  # noqa: E402
import csv  # noqa: E402
import random  # noqa: E402
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

try:  # run from a plain checkout
    import qhybrid  # noqa: F401
except ImportError:  # pragma: no cover
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from qhybrid.qaoa import QAOA  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"
SEED = 1967


def gnm_edges(n: int, m: int, seed: int = SEED) -> list[tuple[int, int]]:
    """``networkx.gnm_random_graph(n, m, seed)``'s edges when networkx is installed, else our own draw."""
    try:
        import networkx as nx

        return [tuple(e) for e in nx.gnm_random_graph(n, m, seed=seed).edges]
    except ImportError:
        pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
        return sorted(random.Random(seed).sample(pairs, m))


def bandwidth(device="cpu", mib: int = 256, repeats: int = 5) -> float:
    """Bytes/s of a large in-place torch copy (read + write counted)."""
    x = torch.ones(mib << 17, dtype=torch.float64, device=device)
    y = torch.empty_like(x)
    y.copy_(x)
    best = float("inf")
    for _ in range(repeats):
        _sync(device)
        t = time.perf_counter()
        y.copy_(x)
        _sync(device)
        best = min(best, time.perf_counter() - t)
    return 2 * x.numel() * 8 / best


def _sync(device):
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def bytes_moved(n: int, p: int, *, dtype=torch.complex128, symmetric: bool = True, index_bytes: int = 2,
                stored: bool = True) -> int:
    """Bytes the fused sweep must move for one energy+gradient (see qaoa/ADJOINT.md).

    S = one (half, for Max-Cut) state, I = the cost index. Stored-state sweep: forward, layer 1
    writes the state (S + I), each high pass reads+writes it and keeps the post-D' state (3S),
    each later low pass reads+writes it and keeps psi (3S + I), the last pass reads psi, writes
    it and lambda (3S + I); backward, per layer a high pass (lambda r/w + stored read, 3S) and a
    low pass (3S + I; 2S + I for layer 1). The un-apply sweep instead moves
    S + I + 2S + (p-1)(4S + I) + 3S + I forward and p (8S + I) backward.
    """
    half = 2 ** (n - 1 if symmetric else n)
    s = half * (16 if dtype == torch.complex128 else 8)
    i = half * index_bytes
    if stored:
        forward = s + i + 3 * s + (p - 1) * (6 * s + i) + 3 * s + i
        backward = p * 3 * s + (p - 1) * (3 * s + i) + 2 * s + i
    else:
        forward = s + i + 2 * s + (p - 1) * (4 * s + i) + 3 * s + i
        backward = p * (8 * s + i)
    return forward + backward


def _timeit(fn, repeats: int, *, warm: bool = True) -> float:
    """Median wall-clock seconds of ``fn()`` (after one warm-up call)."""
    return _timeit_cpu(fn, repeats, warm=warm)[0]


def _timeit_cpu(fn, repeats: int, *, warm: bool = True) -> tuple[float, float]:
    """Median wall-clock and process-CPU seconds of ``fn()``: on a shared machine the CPU seconds
    (all threads of this process) show the work done, the wall-clock also the waiting."""
    if warm:
        fn()  # warm-up (compilation, first-touch of buffers)
    walls, cpus = [], []
    for _ in range(repeats):
        c, t = time.process_time(), time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus)


def _pennylane_timer(device_name: str, edges, n: int, p: int, params):
    import pennylane as qml
    from pennylane import numpy as pnp

    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges)
    from qhybrid.qaoa.pennylane import ansatz, hamiltonians

    cost_h, mixer_h = hamiltonians(g)
    dev = qml.device(device_name, wires=n)

    @qml.qnode(dev, diff_method="adjoint")
    def circuit(x):
        ansatz(x, cost_h, mixer_h, n)
        return qml.expval(cost_h)

    grad_fn = qml.grad(circuit)
    x = pnp.array(params, requires_grad=True)

    def run():
        grad_fn(x)
        return float(grad_fn.forward)

    return run


def run_benchmark(qubits, layers, *, dtype, device, budget, repeats, peers):
    bw = bandwidth(device)
    print(f"memory bandwidth (torch copy, read+write): {bw / 1e9:.1f} GB/s on {device}", flush=True)
    rows, slow = [], set()
    for p in layers:
        for n in qubits:
            edges = gnm_edges(n, int(1.5 * n))
            params = np.random.default_rng(SEED).uniform(0, 1, size=(2, p))
            q = QAOA(edges, n_nodes=n, dtype=dtype, device=device)
            row = {"n": n, "p": p, "dtype": str(dtype).replace("torch.", ""), "device": str(device)}
            row["qhybrid_s"], row["qhybrid_cpu_s"] = _timeit_cpu(lambda: q.energy_and_grad(params), repeats)
            row["energy"] = q.energy(params)
            row["floor_s"] = bytes_moved(n, p, dtype=dtype) / bw
            row["x_floor"] = row["qhybrid_s"] / row["floor_s"]
            for peer in peers:
                key = f"{peer}_s"
                if (peer, p) in slow or (peer == "default.qubit" and n > 12):  # it densifies the Hamiltonian: 16 GiB at n=16
                    row[key] = None
                    continue
                try:
                    name = "qhybrid.cpu" if peer == "qhybrid.cpu-device" else peer
                    fn = _pennylane_timer(name, edges, n, p, params)
                    c, t = time.process_time(), time.perf_counter()
                    e = fn()
                    first, first_cpu = time.perf_counter() - t, time.process_time() - c
                    row[key], row[f"{peer}_cpu_s"] = (first, first_cpu) if first > budget / 4 else _timeit_cpu(fn, 1)
                    if abs(e - row["energy"]) > 1e-6:
                        print(f"warning: {peer} energy {e} != qhybrid {row['energy']} at n={n}, p={p}")
                    if row[key] > budget:
                        slow.add((peer, p))
                except Exception as exc:  # a missing plugin or device: skip, say why
                    print(f"skipping {peer}: {type(exc).__name__}: {exc}"[:200])
                    row[key] = None
                    slow.add((peer, p))
            lq = row.get("lightning.qubit_s")
            row["speedup_vs_lightning"] = lq / row["qhybrid_s"] if lq else None
            lq_cpu = row.get("lightning.qubit_cpu_s")
            row["cpu_speedup_vs_lightning"] = lq_cpu / row["qhybrid_cpu_s"] if lq_cpu else None
            rows.append(row)
            print(_row_md(row, peers), flush=True)
    return rows, bw


def _fmt(x, spec=".3g"):
    return "—" if x is None else format(x, spec)


def _header(peers):
    cols = ["n", "p", "qhybrid (s)", *[f"{p} (s)" for p in peers], "× vs lightning",
            "× vs lightning (CPU s)", "floor (s)", "× floor"]
    return "| " + " | ".join(cols) + " |\n|" + "---|" * len(cols)


def _row_md(r, peers):
    cells = [str(r["n"]), str(r["p"]), _fmt(r["qhybrid_s"]), *[_fmt(r.get(f"{p}_s")) for p in peers],
             _fmt(r["speedup_vs_lightning"], ".0f"), _fmt(r.get("cpu_speedup_vs_lightning"), ".0f"),
             _fmt(r["floor_s"]), _fmt(r["x_floor"], ".1f")]
    return "| " + " | ".join(cells) + " |"


def write_outputs(rows, peers, tag: str):
    OUT.mkdir(parents=True, exist_ok=True)
    keys = sorted({k for r in rows for k in r}, key=lambda k: list(rows[0]).index(k) if k in rows[0] else 99)
    with open(OUT / f"qaoa{tag}.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for p in sorted({r["p"] for r in rows}):
        sub = [r for r in rows if r["p"] == p]
        for key, style in [("qhybrid_s", "-o"), *[(f"{pe}_s", "--s") for pe in peers], ("floor_s", ":")]:
            pts = [(r["n"], r[key]) for r in sub if r.get(key)]
            if pts:
                ax.semilogy(*zip(*pts), style, label=f"{key[:-2]} p={p}")
    ax.set_xlabel("qubits")
    ax.set_ylabel("seconds per energy + gradient")
    ax.set_title("QAOA Max-Cut, gnm(n, 1.5n, seed=1967)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(OUT / f"qaoa{tag}.png", dpi=120)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--qubits", type=int, nargs="+", default=[16, 18, 20, 22, 24])
    parser.add_argument("--layers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--quick", action="store_true", help="n = 16, 20 at p = 2")
    parser.add_argument("--dtype", choices=["complex128", "complex64"], default="complex128")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--budget", type=float, default=60.0, help="seconds; slower peers stop there")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="torch and numba threads (default: all cores)")
    parser.add_argument("--peers", nargs="*", default=["qhybrid.cpu-device", "lightning.qubit", "default.qubit"])
    args = parser.parse_args(argv)
    if args.quick:
        args.qubits, args.layers = [16, 20], [2]
    if args.threads:
        torch.set_num_threads(args.threads)
        try:
            import numba

            numba.set_num_threads(args.threads)
        except ImportError:
            pass
    dtype = torch.complex128 if args.dtype == "complex128" else torch.complex64
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, dtype {args.dtype}", flush=True)
    print(_header(args.peers), flush=True)
    rows, bw = run_benchmark(args.qubits, args.layers, dtype=dtype, device=args.device, budget=args.budget,
                             repeats=args.repeats, peers=args.peers)
    print(f"\nfloor = bytes the fused sweep moves / {bw / 1e9:.1f} GB/s (same run); "
          f"× floor = qhybrid time / floor; CPU s = process CPU seconds (all threads), "
          f"the work done whatever else the machine runs")
    write_outputs(rows, args.peers, "" if args.dtype == "complex128" else "_c64")
    tag = "" if args.dtype == "complex128" else "_c64"
    print(f"wrote {OUT / f'qaoa{tag}.csv'} and qaoa{tag}.png")
    return 0


# ---------------------------------------------------------------- gpu_check sections
def check_qaoa(ctx) -> list[str]:
    """QAOA energy and gradient on ``ctx.device`` against the CPU path (complex128)."""
    failures = []
    tol = {torch.complex128: 1e-9, torch.complex64: 2e-4}
    for n, problem in ctx.sizes([(8, "maxcut"), (12, "maxclique"), (16, "maxcut")], [(5, "maxcut"), (6, "maxclique")]):
        edges = gnm_edges(n, int(1.5 * n), seed=ctx.seed)
        params = np.random.default_rng(n).uniform(-1, 1, size=(2, 3))
        want_e, want_g = QAOA(edges, n_nodes=n, problem=problem, device="cpu").energy_and_grad(params)
        for dtype in ctx.dtypes:
            tag = f"qaoa n={n} {problem} {str(dtype).replace('torch.', '')}"
            try:
                q = QAOA(edges, n_nodes=n, problem=problem, dtype=dtype, device=ctx.device)
                e, g = q.energy_and_grad(params)
                scale = max(1.0, abs(want_e))
                if abs(e - want_e) > tol[dtype] * scale or np.abs(g - want_g).max() > tol[dtype] * scale:
                    failures.append(f"{tag}: energy {e} vs {want_e}, max grad diff {np.abs(g - want_g).max():.2e}")
            except Exception as exc:
                failures.append(f"{tag}: {type(exc).__name__}: {exc}")
    return failures


def time_qaoa(ctx, print_row=None) -> list[dict]:
    """Energy and energy+gradient times at n = 20, 24, 26, 28 (p = 2), and the bandwidth floor;
    each row is passed to ``print_row`` as soon as it is measured."""
    rows = []
    bw = bandwidth(ctx.device, mib=64 if ctx.smoke else 1024)
    for n in ctx.sizes([20, 24, 26, 28], [8, 10]):
        edges = gnm_edges(n, int(1.5 * n), seed=ctx.seed)
        params = np.full((2, 2), 0.5)
        for dtype in ctx.dtypes:
            row = {"section": "qaoa", "workload": "QAOA Max-Cut p=2", "n": n,
                   "dtype": str(dtype).replace("torch.", ""), "params": 4}
            try:
                q = QAOA(edges, n_nodes=n, dtype=dtype, device=ctx.device)
                reps = max(1, ctx.repeats)

                def energy():
                    q.energy(params)

                def both():
                    q.energy_and_grad(params)

                row["forward_s"] = _timeit(energy, reps)
                row["grad_s"] = _timeit(both, reps)
                row["value"] = q.energy(params)
                floor = bytes_moved(n, 2, dtype=dtype) / bw
                row["note"] = (f"floor {floor * 1e3:.2f} ms at {bw / 1e9:.0f} GB/s; "
                               f"{row['grad_s'] / floor:.1f}x floor; backend {q.backend}")
            except Exception as exc:
                row["note"] = f"{type(exc).__name__}: {exc}"[:120]
            rows.append(row)
            if print_row is not None:
                print_row(row)
    return rows


if __name__ == "__main__":
    sys.exit(main())
