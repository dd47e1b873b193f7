"""Seconds per training sample (forward + adjoint gradient) at large registers, with peak memory:
qhybrid's QuantumLayer against PennyLane's TorchLayer on lightning.qubit (adjoint).

Each measurement runs in its own process (so its peak RSS, ``VmHWM``, is its own), the two
engines alternating size by size in one run. A measurement: the layer built with the same
weights, one warm-up step (ours: the kernels load from numba's cache; not for the peer past
``--peer-warm-max`` wires, where a step takes minutes), then one timed step (forward of a
``batch`` of inputs, ``sum().backward()``) and the outputs of both engines compared.
``--trees main=/work/main,new=.`` runs ours from each source tree instead (its ``src`` first on
``PYTHONPATH``, its own numba cache), alternating: old against new in one run.

Used by ``benchmarks/qml.py --per-sample 20,22,24`` (or run directly, same options).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

CHILD = r"""
import json, sys, time, torch
from qhybrid.workloads.qml import set_threads
engine, n, batch, warm = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
set_threads("local:qhybrid/qhybrid.cpu" if engine == "qhybrid" else "local:pennylane/lightning.qubit")
gen = torch.Generator().manual_seed(7)
if engine == "qhybrid":
    from qhybrid.qml import QuantumLayer
    layer = QuantumLayer(n, generator=gen)
else:
    from qhybrid.qml.reference import pennylane_layer
    layer = pennylane_layer(n, "lightning.qubit")
    with torch.no_grad():
        for name in ("w_layer1", "w_layer2"):
            getattr(layer, name).copy_(torch.rand((2, n, 3), generator=gen, dtype=torch.float64) * 2 * torch.pi)
        layer.rotation.copy_(torch.rand((3,), generator=gen, dtype=torch.float64) * 2 * torch.pi)
x = torch.rand((batch, n), generator=torch.Generator().manual_seed(8), dtype=torch.float64) * torch.pi
def step():
    inputs = x.clone().requires_grad_()
    out = layer(inputs).reshape(-1)
    out.sum().backward()
    return out.detach()
if warm:  # loads (or compiles) the kernels: one sample is enough
    layer(x[:1].clone().requires_grad_()).sum().backward()
t = time.perf_counter(); cpu = time.process_time()
out = step()
wall, cpu = time.perf_counter() - t, time.process_time() - cpu
hwm = next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(json.dumps({"engine": engine, "n": n, "batch": batch, "s_per_sample": wall / batch,
                  "cpu_per_sample": cpu / batch, "peak_gib": hwm / 2**30, "out": out.tolist(),
                  "chunk": getattr(layer, "last_chunk", None)}))
"""


def measure(engine: str, n: int, batch: int, *, warm: bool, timeout: float, tree: str | None = None) -> dict:
    """One measurement in a fresh process (``engine``: ``qhybrid`` or ``lightning.qubit``; ``tree``: a
    source tree whose ``src`` comes first on ``PYTHONPATH``)."""
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE")
    if tree:
        src = str(Path(tree).resolve() / "src")
        env.update(PYTHONPATH=os.pathsep.join([src, env.get("PYTHONPATH", "")]),
                   NUMBA_CACHE_DIR=str(Path.home() / ".cache" / f"qhybrid-numba-{Path(tree).resolve().name}"))
    proc = subprocess.run([sys.executable, "-c", CHILD, engine, str(n), str(batch), "1" if warm else "0"],
                          capture_output=True, text=True, timeout=timeout, env=env)
    if proc.returncode:
        return {"engine": engine, "n": n, "batch": batch, "error": proc.stderr.strip().splitlines()[-1:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def rows(wires, batches, *, peer_warm_max: int = 20, peer: bool = True, timeout: float = 3600) -> list[dict]:
    """Ours and the peer, alternating, at every size and batch; the ratio and the outputs' agreement."""
    table = []
    for n in wires:
        for batch in batches:
            ours = measure("qhybrid", n, batch, warm=True, timeout=timeout)
            theirs = measure("lightning.qubit", n, batch, warm=n <= peer_warm_max, timeout=timeout) if peer else {}
            row = {"n": n, "batch": batch, "ours_s": ours.get("s_per_sample"), "ours_peak_gib": ours.get("peak_gib"),
                   "chunk": ours.get("chunk"), "peer_s": theirs.get("s_per_sample"),
                   "peer_peak_gib": theirs.get("peak_gib")}
            if row["ours_s"] and row["peer_s"]:
                row["ratio"] = row["peer_s"] / row["ours_s"]
                row["max_diff"] = max(abs(a - b) for a, b in zip(ours["out"], theirs["out"]))
            row["errors"] = [r["error"] for r in (ours, theirs) if "error" in r] or None
            table.append(row)
            print(_line(row), flush=True)
    return table


def tree_rows(wires, batches, trees: dict, *, timeout: float = 3600) -> list[dict]:
    """Ours from each source tree (``{label: path}``), alternating at every size and batch."""
    table = []
    for n in wires:
        for batch in batches:
            for label, tree in trees.items():
                r = measure("qhybrid", n, batch, warm=True, timeout=timeout, tree=tree)
                table.append({"tree": label, **{k: v for k, v in r.items() if k != "out"}})
                print(f"| {label} | {n} | {batch} | {r.get('s_per_sample', float('nan')):.3f} s | "
                      f"{r.get('peak_gib', float('nan')):.2f} GiB (chunk {r.get('chunk')}) |"
                      + (f" {r['error']}" if "error" in r else ""), flush=True)
    return table


def _line(r: dict) -> str:
    def f(v, spec):
        return format(v, spec) if isinstance(v, (int, float)) else "-"
    return (f"| {r['n']} | {r['batch']} | {f(r['ours_s'], '.2f')} s | {f(r['ours_peak_gib'], '.2f')} GiB "
            f"(chunk {r['chunk']}) | {f(r['peer_s'], '.1f')} s | {f(r['peer_peak_gib'], '.2f')} GiB | "
            f"{f(r.get('ratio'), '.1f')}x | {f(r.get('max_diff'), '.1e')} |" + (f" {r['errors']}" if r["errors"] else ""))


HEADER = ("| wires | batch | qhybrid s/sample | qhybrid peak RSS | lightning.qubit s/sample | lightning peak RSS "
          "| ratio | max output diff |\n| --- | --- | --- | --- | --- | --- | --- | --- |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-sample", default="20,22,24", help="wires, comma separated")
    parser.add_argument("--batches", default="1,16")
    parser.add_argument("--peer-warm-max", type=int, default=20)
    parser.add_argument("--no-peer", action="store_true")
    parser.add_argument("--trees", help="label=path,...: ours from each source tree, alternating (no peer)")
    args = parser.parse_args(argv)
    wires, batches = [int(w) for w in args.per_sample.split(",") if w], [int(b) for b in args.batches.split(",") if b]
    if args.trees:
        trees = dict(item.split("=", 1) for item in args.trees.split(","))
        print(f"load {os.getloadavg()[0]:.1f} at {time.strftime('%H:%M:%S')}\n| tree | wires | batch | s/sample "
              "| peak RSS |\n| --- | --- | --- | --- | --- |", flush=True)
        tree_rows(wires, batches, trees)
        print(f"load {os.getloadavg()[0]:.1f} at {time.strftime('%H:%M:%S')}")
        return 0
    print(f"load {os.getloadavg()[0]:.1f} at {time.strftime('%H:%M:%S')}\n{HEADER}", flush=True)
    rows([int(w) for w in args.per_sample.split(",") if w], [int(b) for b in args.batches.split(",") if b],
         peer_warm_max=args.peer_warm_max, peer=not args.no_peer)
    print(f"load {os.getloadavg()[0]:.1f} at {time.strftime('%H:%M:%S')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
