"""One short call on a CUDA machine: is qhybrid right there, and how fast is it?

Meant for a GPU box that has torch but *not* PennyLane, so it uses only the
engine's pure API (``qhybrid.sim``) and imports nothing from PennyLane or
networkx. It runs a list of sections; each section is a pair of functions:

- ``check_<x>(ctx) -> list[str]``: correctness; returns failure messages
  (empty when all is well);
- ``time_<x>(ctx) -> list[dict]``: timings; returns table rows.

Correctness first (CUDA against the CPU engine's unfused torch reference path,
complex64 and complex128), then a timing table (markdown) of qhybrid on CUDA.
Exit status 1 when any check fails (or a section crashes), 0 otherwise.

Usage::

    python benchmarks/gpu_check.py                 # on the CUDA machine (a few minutes at most)
    python benchmarks/gpu_check.py --small         # tiny sizes (CPU without CUDA), to know the script works
    python benchmarks/gpu_check.py --interpret     # the Triton section on CPU under Triton's interpreter
    python benchmarks/gpu_check.py --only engine --repeats 5 --no-time
    python benchmarks/gpu_check.py --out DIR       # also write DIR/gpu_check.json and gpu_check.md ($OUT)

The QAOA and QML engineers add their sections to ``SECTIONS`` at the bottom
(see "EXTENSION POINT").
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

try:  # run from a plain checkout (no pip install on the GPU box)
    import qhybrid  # noqa: F401
except ImportError:  # pragma: no cover
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from qhybrid.sim import (GATES, Circuit, Measurement, Observable, Operation,  # noqa: E402
                         adjoint_jacobian, simulate)

DTYPES = {"complex64": torch.complex64, "complex128": torch.complex128}
# state / expval tolerances against the complex128 CPU reference
TOL = {torch.complex128: 1e-10, torch.complex64: 2e-5}


@dataclass
class Context:
    """What every section gets: where to run, how big, how often."""

    device: torch.device
    smoke: bool
    repeats: int
    dtypes: list = field(default_factory=lambda: list(DTYPES.values()))
    seed: int = 1967
    deadline: float | None = None  # time.monotonic() past which the Triton section skips its remaining items

    def sizes(self, full, smoke):
        return smoke if self.smoke else full

    def sync(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)


# ---------------------------------------------------------------- random engine circuits

# gates drawn by the random circuits; Rot/CRot have no generator (never trainable)
_SKIP = {"Identity", "U1", "CPhase"}


def _random_unitary(rng, dim):
    z = rng.normal(size=(dim, dim)) + 1j * rng.normal(size=(dim, dim))
    q, r = np.linalg.qr(z)
    return q * (np.diag(r) / np.abs(np.diag(r)))


def random_operation(rng, name, n):
    """One engine Operation called ``name`` on random wires with random parameters."""
    gate = GATES[name]
    k = gate.num_wires
    if k is None:
        k = int(rng.integers(1, min(3, n) + 1)) if name != "MultiRZ" else int(rng.integers(2, min(5, n) + 1))
        if name == "GlobalPhase":
            k = n
    wires = tuple(int(w) for w in rng.choice(n, size=k, replace=False))
    if name == "QubitUnitary":
        return Operation(name, wires, (_random_unitary(rng, 2**k),))
    if name == "DiagonalQubitUnitary":
        diag = np.exp(1j * rng.uniform(0, 2 * np.pi, 2**k))
        return Operation(name, wires, (diag[None, :],))  # (1, 2**k): one broadcast row
    params = tuple(float(x) for x in rng.uniform(-np.pi, np.pi, gate.num_params))
    trainable = (0,) if gate.num_params == 1 and gate.generator is not None else ()
    return Operation(name, wires, params, trainable=trainable, adjoint=bool(rng.random() < 0.2))


def random_circuit(rng, n, depth):
    """A random engine circuit with diagonal runs and single-wire runs (to exercise fusion)."""
    names = [g for g in GATES if g not in _SKIP and (GATES[g].num_wires or 1) <= n]
    diag = [g for g in names if GATES[g].is_diagonal and g != "DiagonalQubitUnitary"]
    single = [g for g in names if GATES[g].num_wires == 1]
    ops = [Operation("Hadamard", (w,)) for w in range(n)]
    while len(ops) < depth:
        kind = rng.integers(3)
        pool = names if kind == 0 else diag if kind == 1 else single
        wire = int(rng.integers(n))
        for _ in range(int(rng.integers(4, 10))):
            op = random_operation(rng, str(rng.choice(pool)), n)
            if kind == 2:
                op = Operation(op.name, (wire,), op.params, op.trainable, op.adjoint)
            ops.append(op)
    return ops


def random_observable(rng, n, terms=20):
    """A sum of Pauli words (half of them all-Z) and one dense 2-qubit Hermitian term."""
    words = {}
    for _ in range(terms):
        k = int(rng.integers(1, min(4, n) + 1))
        wires = sorted(int(w) for w in rng.choice(n, size=k, replace=False))
        letters = "Z" * k if rng.random() < 0.5 else "".join(rng.choice(list("XYZ"), size=k))
        words[tuple(zip(wires, letters))] = float(rng.uniform(-1, 1))
    a = rng.normal(size=(4, 4)) + 1j * rng.normal(size=(4, 4))
    herm = Observable.hermitian((a + a.conj().T) / 2, wires=(0, n - 1))
    paulis = Observable.pauli(words)
    return Observable(paulis=paulis.paulis, dense=herm.dense)


def _close(name, got, want, tol, failures):
    got = got.detach().to("cpu", torch.complex128 if got.is_complex() else torch.float64)
    want = want.detach().to("cpu", got.dtype)
    if got.shape != want.shape:
        failures.append(f"{name}: shape {tuple(got.shape)} != {tuple(want.shape)}")
        return
    err = float((got - want).abs().max()) if got.numel() else 0.0
    scale = max(1.0, float(want.abs().max())) if want.numel() else 1.0
    if not err <= tol * scale:
        failures.append(f"{name}: max |diff| {err:.2e} > {tol * scale:.1e}")


# ---------------------------------------------------------------- section: engine

def check_engine(ctx: Context) -> list[str]:
    """Random circuits on ``ctx.device`` vs the CPU torch reference path (unfused, complex128)."""
    failures = []
    rng = np.random.default_rng(ctx.seed)
    for n in ctx.sizes([4, 7, 10, 14], [3, 5, 7]):
        ops = random_circuit(rng, n, depth=8 * n)
        obs = random_observable(rng, n)
        ms = (Measurement("state"), Measurement("expval", obs=obs), Measurement("var", obs=obs),
              Measurement("probs", wires=(n - 1, 0)))
        circuit = Circuit(n, tuple(ops), ms)
        want = simulate(circuit, dtype=torch.complex128, device="cpu", kernels="torch", fuse=False)
        grad_circuit = Circuit(n, tuple(ops), (Measurement("expval", obs=obs),))
        want_jac = adjoint_jacobian(grad_circuit, dtype=torch.complex128, device="cpu", kernels="torch", fuse=False)
        for dtype in ctx.dtypes:
            tol = TOL[dtype]
            tag = f"n={n} {str(dtype).replace('torch.', '')}"
            try:
                got = simulate(circuit, dtype=dtype, device=ctx.device)
                for m, g, w in zip(ms, got, want):
                    _close(f"{tag} {m.kind}", g, w, tol * (10 if m.kind == "var" else 1), failures)
                jac = adjoint_jacobian(grad_circuit, dtype=dtype, device=ctx.device)
                _close(f"{tag} adjoint jacobian", jac, want_jac, 10 * tol, failures)
            except Exception as exc:  # a crash is a failure, reported with its cause
                failures.append(f"{tag}: {type(exc).__name__}: {exc}")
    # a broadcast batch of 3 parameter rows
    n = ctx.sizes(8, 4)
    ops = [Operation("Hadamard", (w,)) for w in range(n)]
    ops += [Operation("RX", (w,), (np.linspace(0.1, 1.2, 3) * (w + 1),), trainable=(0,)) for w in range(n)]
    ops += [Operation("IsingZZ", (w, (w + 1) % n), (0.3 * w,), trainable=(0,)) for w in range(n)]
    ops += [Operation("CRY", (0, n - 1), (np.array([0.2, -0.4, 1.1]),), trainable=(0,))]
    circuit = Circuit(n, tuple(ops), (Measurement("expval", obs=random_observable(rng, n)),))
    want = simulate(circuit, dtype=torch.complex128, device="cpu", kernels="torch", fuse=False)[0]
    want_jac = adjoint_jacobian(circuit, dtype=torch.complex128, device="cpu", kernels="torch", fuse=False)
    for dtype in ctx.dtypes:
        tag = f"broadcast {str(dtype).replace('torch.', '')}"
        try:
            _close(f"{tag} expval", simulate(circuit, dtype=dtype, device=ctx.device)[0], want,
                   TOL[dtype], failures)
            _close(f"{tag} jacobian", adjoint_jacobian(circuit, dtype=dtype, device=ctx.device),
                   want_jac, 10 * TOL[dtype], failures)
        except Exception as exc:
            failures.append(f"{tag}: {type(exc).__name__}: {exc}")
    return failures


def sel_circuit(n, layers=3, seed=1967):
    """StronglyEntanglingLayers as engine gates (Rot = RZ RY RZ, CNOT ring of range l+1), <Z0>."""
    rng = np.random.default_rng(seed)
    ops = []
    for layer in range(layers):
        for w in range(n):
            for name, theta in zip(("RZ", "RY", "RZ"), rng.uniform(0, 2 * np.pi, 3)):
                ops.append(Operation(name, (w,), (float(theta),), trainable=(0,)))
        r = layer % (n - 1) + 1
        ops += [Operation("CNOT", (w, (w + r) % n)) for w in range(n)]
    return Circuit(n, tuple(ops), (Measurement("expval", obs=Observable.pauli({"Z": 1.0}, wires=(0,))),))


def random_edges(n, m, seed=1967):
    """``m`` distinct random edges on ``n`` nodes (a gnm-like graph without networkx)."""
    rng = np.random.default_rng(seed)
    edges = set()
    while len(edges) < m:
        i, j = sorted(int(x) for x in rng.choice(n, size=2, replace=False))
        edges.add((i, j))
    return sorted(edges)


def qaoa_circuit(n, p=2, seed=1967):
    """QAOA Max-Cut-like: H, then p x (IsingZZ on 1.5 n edges, RX mixer); <sum 0.5 Z_i Z_j>."""
    edges = random_edges(n, int(1.5 * n), seed)
    ops = [Operation("Hadamard", (w,)) for w in range(n)]
    for layer in range(p):
        ops += [Operation("IsingZZ", e, (0.5,), trainable=(0,)) for e in edges]
        ops += [Operation("RX", (w,), (0.5,), trainable=(0,)) for w in range(n)]
    obs = Observable.pauli({((i, "Z"), (j, "Z")): 0.5 for i, j in edges})
    return Circuit(n, tuple(ops), (Measurement("expval", obs=obs),))


def pauli_circuit(n, terms=200, layers=3, seed=1967):
    """A hardware-efficient ansatz (RY, RZ, CNOT chain) and 200 random Pauli words."""
    rng = np.random.default_rng(seed)
    words = {}
    while len(words) < terms:
        k = int(rng.integers(1, min(6, n) + 1))
        wires = sorted(int(w) for w in rng.choice(n, size=k, replace=False))
        words[tuple(zip(wires, rng.choice(list("XYZ"), size=k)))] = float(rng.normal())
    ops = []
    for layer in range(layers):
        for w in range(n):
            ops.append(Operation("RY", (w,), (float(rng.uniform(-np.pi, np.pi)),), trainable=(0,)))
            ops.append(Operation("RZ", (w,), (float(rng.uniform(-np.pi, np.pi)),), trainable=(0,)))
        ops += [Operation("CNOT", (w, w + 1)) for w in range(n - 1)]
    return Circuit(n, tuple(ops), (Measurement("expval", obs=Observable.pauli(words)),))


def _median(ctx, fn):
    fn()  # warm-up (allocations, JIT, kernel caches)
    ctx.sync()
    times = []
    for _ in range(ctx.repeats):
        t0 = time.perf_counter()
        fn()
        ctx.sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def time_engine(ctx: Context) -> list[dict]:
    """Forward and forward+adjoint-gradient times of SEL, QAOA-like and Pauli-sum workloads."""
    workloads = [("SEL 3 layers", sel_circuit, ctx.sizes([16, 20, 24], [6, 8])),
                 ("QAOA-like p=2", qaoa_circuit, ctx.sizes([20, 24, 26], [6, 8])),
                 ("200 Pauli words", pauli_circuit, ctx.sizes([20, 24], [6]))]
    rows = []
    for label, build, sizes in workloads:
        for n in sizes:
            circuit = build(n)
            for dtype in ctx.dtypes:
                row = {"section": "engine", "workload": label, "n": n,
                       "dtype": str(dtype).replace("torch.", ""), "params": sum(
                           len(op.trainable) for op in circuit.operations)}
                try:
                    row["forward_s"] = _median(ctx, lambda: simulate(circuit, dtype=dtype, device=ctx.device))
                    row["grad_s"] = _median(ctx, lambda: adjoint_jacobian(circuit, dtype=dtype, device=ctx.device))
                    row["value"] = float(simulate(circuit, dtype=dtype, device=ctx.device)[0][0].real)
                except Exception as exc:
                    row["note"] = f"{type(exc).__name__}: {exc}"[:120]
                rows.append(row)
                print_row(row)
    return rows


# ---------------------------------------------------------------- driver

TABLE = ["section", "workload", "n", "dtype", "params", "forward_s", "grad_s", "value", "note"]


def print_header():
    print("| " + " | ".join(TABLE) + " |")
    print("|" + "---|" * len(TABLE))


def print_row(row):
    def cell(k):
        v = row.get(k, "")
        return f"{v:.4f}" if isinstance(v, float) else str(v)
    print("| " + " | ".join(cell(k) for k in TABLE) + " |", flush=True)


def machine_info(device) -> list[str]:
    lines = [f"python {platform.python_version()}, torch {torch.__version__}, "
             f"cores {os.cpu_count()}, torch threads {torch.get_num_threads()}"]
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        lines.append(f"GPU {props.name}, {props.total_memory / 2**30:.0f} GiB, "
                     f"CUDA {torch.version.cuda}")
    try:
        import numba

        lines.append(f"numba {numba.__version__}")
    except ImportError:
        lines.append("numba not installed")
    return lines


# ================================================================ EXTENSION POINT
# Each section: (name, check_fn, time_fn); either function may be None.
#   check_fn(ctx) -> list[str] of failure messages (empty = pass)
#   time_fn(ctx)  -> list[dict] of rows with the keys of TABLE (print them with print_row)
# QAOA engineer: append ("qaoa", check_qaoa, time_qaoa) - qhybrid.qaoa on CUDA vs CPU.
# QML engineer:  append ("qml", check_qml, time_qml)    - qhybrid.qml layers on CUDA vs CPU.
# Use only torch, numpy and qhybrid here: the GPU box has no PennyLane, no networkx.
SECTIONS = [
    ("engine", check_engine, time_engine),
]


def _bench_module(name):
    """Load ``benchmarks/<name>.py`` by path (the folder is not a package), once."""
    import importlib.util

    if f"qhybrid_bench_{name}" in sys.modules:
        return sys.modules[f"qhybrid_bench_{name}"]
    spec = importlib.util.spec_from_file_location(f"qhybrid_bench_{name}", Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def check_qml(ctx):  # benchmarks/qml.py: DressedQNN on CUDA vs the CPU torch kernels
    return _bench_module("qml").check_qml(ctx)


def time_qml(ctx):  # benchmarks/qml.py: training step at 20, 24, 26 wires, complex64
    return _bench_module("qml").time_qml(ctx)


SECTIONS.append(("qml", check_qml, time_qml))


def check_qaoa(ctx):  # benchmarks/qaoa.py: QAOA energy+gradient on CUDA vs the CPU path
    return _bench_module("qaoa").check_qaoa(ctx)


def time_qaoa(ctx):  # benchmarks/qaoa.py: energy+gradient at n = 20, 24, 26, 28 (p = 2), bandwidth floor
    return _bench_module("qaoa").time_qaoa(ctx, print_row=print_row)


SECTIONS.append(("qaoa", check_qaoa, time_qaoa))


def check_triton(ctx):  # benchmarks/gpu_triton.py: compile (tile fallback), vs torch and the CPU engine
    return _bench_module("gpu_triton").check_triton(ctx)


def time_triton(ctx):  # benchmarks/gpu_triton.py: copy bandwidth, per-pass fraction, QAOA vs floor, lightning.gpu
    return _bench_module("gpu_triton").time_triton(ctx, print_row)


SECTIONS.append(("triton", check_triton, time_triton))
# ================================================================ END EXTENSION POINT


class _Tee:
    """stdout that is also kept (the markdown report written to ``--out``)."""

    def __init__(self, stream):
        self.stream, self.parts = stream, []

    def write(self, text):
        self.parts.append(text)
        return self.stream.write(text)

    def flush(self):
        self.stream.flush()


def _parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cpu-smoke", "--small", dest="small", action="store_true",
                        help="tiny sizes (on CPU when there is no CUDA device): to know the script works")
    parser.add_argument("--interpret", action="store_true",
                        help="the Triton section on CPU tensors under Triton's interpreter (implies --small "
                             "and, without --only, --only triton)")
    parser.add_argument("--only", default=None, help="comma-separated section names")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dtype", choices=[*DTYPES, "both"], default="both")
    parser.add_argument("--no-time", action="store_true", help="correctness checks only")
    parser.add_argument("--budget", type=float, default=450.0,
                        help="seconds from the start after which the Triton section skips its remaining timings, "
                             "said so in their rows (0: none); keeps the whole run within 8 minutes")
    parser.add_argument("--out", default=os.environ.get("OUT"),
                        help="folder for gpu_check.json and gpu_check.md (default: $OUT when set)")
    args = parser.parse_args(argv)
    if args.interpret:
        os.environ["TRITON_INTERPRET"] = "1"  # read when the Triton kernels are first imported
        args.small = True
        args.only = args.only or "triton"
    names = [s for s, _, _ in SECTIONS]
    only = names if args.only is None else [s.strip() for s in args.only.split(",")]
    unknown = [s for s in only if s not in names]
    if unknown:
        parser.error(f"--only: unknown section(s) {unknown}; valid: {', '.join(names)}")
    return args, only


def main(argv=None) -> int:
    args, only = _parse(argv)
    if args.interpret or (args.small and not torch.cuda.is_available()):
        device = torch.device("cpu")
    elif torch.cuda.is_available():
        device = torch.device("cuda")
    else:
        print("no CUDA device; run with --small (or --interpret) to check the script on CPU", file=sys.stderr)
        return 2
    dtypes = list(DTYPES.values()) if args.dtype == "both" else [DTYPES[args.dtype]]
    ctx = Context(device=device, smoke=args.small, repeats=args.repeats, dtypes=dtypes,
                  deadline=time.monotonic() + args.budget if args.budget > 0 else None)
    tee = sys.stdout = _Tee(sys.stdout)
    report = {"device": str(device), "small": args.small, "interpret": args.interpret,
              "machine": machine_info(device), "checks": {}, "rows": []}
    try:
        failed = _run(ctx, args, only, report)
    finally:
        sys.stdout = tee.stream
    if args.out:
        import json

        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "gpu_check.json").write_text(json.dumps(report, indent=1, default=str) + "\n")
        (out / "gpu_check.md").write_text("".join(tee.parts))
        print(f"wrote {out / 'gpu_check.json'} and {out / 'gpu_check.md'}")
    return 1 if failed else 0


def _run(ctx, args, only, report) -> bool:
    device = ctx.device
    tag = " (interpreter, tiny sizes)" if args.interpret else " (small sizes)" if args.small else ""
    print(f"## qhybrid GPU check on {device}{tag}\n")
    for line in report["machine"]:
        print(f"- {line}")
    failed = False
    print("\n### correctness\n")
    for name, check, _ in SECTIONS:
        if name not in only or check is None:
            continue
        t0 = time.perf_counter()
        try:
            failures = check(ctx)
        except Exception:
            failures = ["crashed:\n" + traceback.format_exc()]
        failed |= bool(failures)
        status = "PASS" if not failures else f"FAIL ({len(failures)})"
        report["checks"][name] = {"status": status, "failures": failures, "seconds": time.perf_counter() - t0}
        print(f"- {name}: {status} in {time.perf_counter() - t0:.1f} s")
        for f in failures[:20]:
            print(f"    - {f}")
    if not args.no_time:
        print("\n### timings (median of %d after a warm-up; grad_s = forward + adjoint gradient)\n"
              % args.repeats)
        print_header()
        for name, _, timer in SECTIONS:
            if name not in only or timer is None:
                continue
            try:
                report["rows"] += timer(ctx) or []
            except Exception:
                failed = True
                print(f"\n{name}: timing crashed:\n{traceback.format_exc()}")
        missed = [r for r in report["rows"] if "MISSED" in str(r.get("note", ""))]
        met = [r for r in report["rows"] if "target met" in str(r.get("note", ""))]
        if met or missed:
            print(f"\ntargets: {len(met)} met, {len(missed)} missed"
                  + (" (interpreter timings mean nothing)" if args.interpret else ""))
    print(f"\n{'FAILED' if failed else 'OK'}")
    return failed


if __name__ == "__main__":
    raise SystemExit(main())
