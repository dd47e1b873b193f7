"""QAOA fast path: one energy+gradient's time per kernel pass, per amplitude, at growing node counts.

For gnm(n, 1.5 n, seed=1967), p = 2 (as ``qhybrid qaoa`` runs), complex128, the numba engine: the
wall-clock of each kernel launch of one energy+gradient (one start), summed per kernel, as
nanoseconds per simulated amplitude (``2**(n-1)`` under Max-Cut's symmetry), the best of
``--repeats`` calls after a warm one, layouts side by side (``--block-bits``). Also prints where the state buffers lie (their distance
modulo 256 MiB: the L1 alias of two streams a multiple of 256 MiB apart, see PERF_NOTES.md).

    python benchmarks/qaoa_passes.py --nodes 20 22 24 26 28
    python benchmarks/qaoa_passes.py --nodes 26 28 --block-bits 14 0   # the uncapped layout vs the default
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

try:  # run from a plain checkout
    import qhybrid  # noqa: F401
except ImportError:  # pragma: no cover
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from qhybrid.qaoa import QAOA  # noqa: E402
from qhybrid.qaoa import numba_kernels as nk  # noqa: E402
from qhybrid.qaoa.problem import random_graph  # noqa: E402

SEED = 1967
MIB256 = 1 << 28


def timed_launch(record: dict):
    """A stand-in for ``numba_kernels.launch`` that adds each launch's wall-clock to ``record[name]``."""
    plain = nk.launch

    def launch(kernel, *args, threads, counter):
        t = time.perf_counter()
        plain(kernel, *args, threads=threads, counter=counter)
        name = getattr(kernel, "__name__", None) or kernel.py_func.__name__
        record[name] += time.perf_counter() - t

    return plain, launch


def one(sim: QAOA, params, record: dict) -> float:
    """Seconds of one energy+gradient, its launches' times added into ``record``."""
    plain, launch = timed_launch(record)
    nk.launch = launch
    try:
        t = time.perf_counter()
        sim.energy_and_grad(params)
        return time.perf_counter() - t
    finally:
        nk.launch = plain


def placement(engine) -> str:
    """Where psi, lambda and the stored states lie: each one's offset from psi modulo 256 MiB (MiB)."""
    b = engine.fused().buffers
    base = b.psi.ctypes.data
    parts = [("lam", b.lam)] + [(f"s{i}", s) for i, s in enumerate(b.stores)]
    return " ".join(f"{name}:{((a.ctypes.data - base) % MIB256) / 2**20:.3f}" for name, a in parts)


def measure(n: int, p: int, repeats: int, variants) -> list[dict]:
    """One row per layout variant (``block_bits`` of ``qaoa.sweep.layout``; None: the default) on one
    graph's diagonal, the variants' calls alternating; each row's results against the first's."""
    from qhybrid.qaoa.sweep import NumbaQAOA

    g = random_graph(n, int(1.5 * n), seed=SEED)
    t = time.perf_counter()
    sim = QAOA(g.edges, n_nodes=n)
    build = time.perf_counter() - t
    params = np.full((2, p), 0.3)
    engines = [NumbaQAOA(sim.diagonal, dtype="complex128", symmetric=True, block_bits=h) for h in variants]
    rows = []
    for h, engine in zip(variants, engines):
        sim.engine = engine
        t = time.perf_counter()
        e, grad = sim.energy_and_grad(params)
        rows.append({"n": n, "block_bits": h, "build": build, "first": time.perf_counter() - t, "total": float("inf"),
                     "parts": None, "half": 2 ** (n - 1), "where": placement(engine), "e": e, "grad": grad})
    for _ in range(repeats):
        for row, engine in zip(rows, engines):
            sim.engine = engine
            record = defaultdict(float)
            total = one(sim, params, record)
            if total < row["total"]:
                row["total"], row["parts"] = total, dict(record)
    for row, engine in zip(rows, engines):
        b = engine.fused().buffers
        row["layout"] = f"k={b.low_bits} w={b.tile_width}"
        row["diff"] = max(abs(row["e"] - rows[0]["e"]), float(np.abs(row["grad"] - rows[0]["grad"]).max()))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[20, 22, 24, 26, 28])
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--block-bits", type=int, nargs="+", default=[0],
                        help="layouts side by side: qaoa.sweep.layout's block_bits (0: the default; 14: the "
                             "complex128 layout before the high pass was capped, sweep.HIGH_BITS)")
    args = parser.parse_args(argv)
    variants = [h or None for h in args.block_bits]
    rows = []
    for n in args.nodes:
        for r in measure(n, args.layers, args.repeats, variants):
            rows.append(r)
            ns = 1e9 / r["half"]
            print(f"n={n} {r['layout']} build {r['build']:.2f}s first {r['first']:.3f}s e+g {r['total']:.4f}s "
                  f"= {r['total'] * ns:.2f} ns/amp; diff {r['diff']:.1e}; buffers (MiB from psi mod 256) "
                  f"{r['where']}", flush=True)
            print("   " + "  ".join(f"{k} {v * ns:.2f}" for k, v in sorted(r["parts"].items())), flush=True)
    names = sorted({k for r in rows for k in r["parts"]})
    print("\n| n | layout | e+g s | ns/amp | " + " | ".join(names) + " |")
    print("|---" * (4 + len(names)) + "|")
    for r in rows:
        ns = 1e9 / r["half"]
        cells = " | ".join(f"{r['parts'].get(k, 0) * ns:.2f}" for k in names)
        print(f"| {r['n']} | {r['layout']} | {r['total']:.4f} | {r['total'] * ns:.2f} | {cells} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
