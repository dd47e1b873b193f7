"""Do the built-in jobs end in answers? QAOA on a suite of random graphs, QML over seeds.

    .venv/bin/python benchmarks/answers.py [--graphs 20] [--qml-seeds 5] [--json]

QAOA: ``gnm_random_graph(18, 24, seed)`` for seeds 0..graphs-1, the job's default settings
(to convergence, layer by layer to p = 2, 4 starts): whether the best of the 64 likeliest
bitstrings is an optimal cut, and the expectation's approximation ratio (target >= 0.8).
QML: the default DressedQNN run on Sonar for a few seeds, validation accuracy (target >= 0.70,
the majority class is 0.53). Calls the workload functions directly, no job runtime; the
checkpoints go to a throwaway folder.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import sys
import tempfile
import time


def qaoa_suite(graphs: int) -> list[dict]:
    import networkx as nx

    import qhybrid.workloads.qaoa as w

    rows = []
    settings = w.parse_settings({})
    for seed in range(graphs):
        g = nx.gnm_random_graph(settings.n_nodes, settings.n_edges, seed=seed)
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            r = w.run(settings, device_string="local:qhybrid/qhybrid.cpu", graph=g)
        rows.append({"seed": seed, "found": r["found"], "ratio": r["approximation_ratio"],
                     "iterations": r["iterations"], "seconds": time.perf_counter() - t0, "summary": r["summary"]})
        with contextlib.suppress(FileNotFoundError):  # each graph starts afresh
            for f in os.scandir("qhybrid-local/checkpoints"):
                os.remove(f.path)
        print(f"graph {seed:3d}: {r['summary']}; ratio {r['approximation_ratio']:.3f}, {r['iterations']} iterations, "
              f"{rows[-1]['seconds']:.1f} s", file=sys.stderr, flush=True)
    return rows


def qml_seeds(seeds: int) -> list[dict]:
    import qhybrid.workloads.qml as w

    rows = []
    for seed in [1967, *range(1, seeds)]:
        with contextlib.redirect_stdout(io.StringIO()):
            r = w.train(w.parse_settings({"seed": str(seed)}), device_string="local:qhybrid/qhybrid.cpu")
        rows.append({"seed": seed, "val_accuracy": r["accuracy"]})
        with contextlib.suppress(FileNotFoundError):
            for f in os.scandir("qhybrid-local/checkpoints"):
                os.remove(f.path)
        print(f"qml seed {seed}: {r['summary']}", file=sys.stderr, flush=True)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=int, default=20)
    parser.add_argument("--qml-seeds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    os.chdir(tempfile.mkdtemp(prefix="qhybrid-answers-"))
    qaoa, qml = qaoa_suite(args.graphs), qml_seeds(args.qml_seeds)
    summary = {
        "qaoa": {"graphs": len(qaoa), "optimum_found": sum(r["found"] for r in qaoa),
                 "ratio_at_least_0.8": sum(r["ratio"] >= 0.8 for r in qaoa),
                 "ratio_min": min(r["ratio"] for r in qaoa), "ratio_mean": statistics.mean(r["ratio"] for r in qaoa)},
        "qml": {"seeds": len(qml), "val_accuracy": [round(r["val_accuracy"], 3) for r in qml],
                "at_least_0.70": sum(r["val_accuracy"] >= 0.70 for r in qml)},
    }
    print(json.dumps({"summary": summary, "qaoa": qaoa, "qml": qml} if args.json else summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
