"""Start-up of the ``qhybrid`` command, end to end, against another checkout (the peer) in one run;
or (``--devices``) of a PennyLane program on qhybrid.cpu against lightning.qubit.

    .venv/bin/python benchmarks/startup.py --peer /tmp/old-checkout [--repeats 5]
    .venv/bin/python benchmarks/startup.py --devices [--wires 2,6,10,14] [--repeats 5] [--cold 1]
        [--cold-wires 6,14] [--engine-wires 6,14]

``--devices`` times, from process start to exit, a fresh process that imports PennyLane, creates
``qml.device(name, wires=n)``, runs a small QNode (RX on every wire, a CNOT chain, one
expectation) for its value and its gradient (the default diff method: adjoint on both) and
exits; the two devices take turns run by run. Warm: qhybrid's kernel cache filled by an untimed
run first. Cold: an empty kernel cache folder per run (the first run after an install); both
devices print what they computed, and the values must agree to 1e-10.

Times, as real subprocesses (wall time, from the spawn to the exit), a warm small job
``qhybrid qaoa --nodes 10 --quiet`` (the numba kernels already cached: one untimed warm-up run
per tree compiles them first), ``qhybrid devices`` and ``qhybrid --help``; ours and the peer's
taking turns call by call, so a busy spell on a shared machine falls on both. Each tree runs with
its own ``src`` first on ``PYTHONPATH``, its own numba cache folder (kept in ``--cache`` between
runs: a cold one costs a compilation of a minute or two) and its own throwaway ``QHYBRID_HOME``; ``--bytecode`` gives each tree a bytecode cache (``PYTHONPYCACHEPREFIX``), as an
installed package has, where ``PYTHONDONTWRITEBYTECODE`` would recompile the sources each run.
Prints the median and range of each, the ratio peer / ours, and the load average before and after.

``--stages`` also prints, for one job run of each tree, when each process of the chain started and
ended (``strace -f -e trace=execve,exit_group``) beside the job's own records: created, running,
first and last metric, ended.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
COMMANDS = {"qaoa --nodes 10": ["qaoa", "--nodes", "10", "--quiet"], "devices": ["devices"], "--help": ["--help"]}


def tree_env(tree: Path, cache: Path, *, bytecode: bool) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "NUMBA_CACHE_DIR": str(cache / "numba"),
           "QHYBRID_HOME": tempfile.mkdtemp(prefix="qhybrid-startup-"), "NO_COLOR": "1"}
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(cache / "pycache")
    return env


def timed(argv: list[str], env: dict, cwd: Path) -> float:
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "qhybrid", *argv], env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, timeout=900)
    wall = time.perf_counter() - t0
    if out.returncode:
        raise SystemExit(f"qhybrid {' '.join(argv)} failed in {cwd}:\n{out.stderr[-2000:]}")
    return wall


def stages(env: dict, cwd: Path) -> None:
    """One job run under strace: the process chain and the job's own timestamps, from the spawn."""
    import json

    trace = Path(env["QHYBRID_HOME"]) / "trace.txt"
    t0 = time.time()
    subprocess.run(["strace", "-f", "-ttt", "-e", "trace=execve,exit_group", "-o", str(trace),
                    sys.executable, "-m", "qhybrid", *COMMANDS["qaoa --nodes 10"]],
                   env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=900)
    events, python = [], set()
    for line in trace.read_text().splitlines():
        m = re.match(r"(\d+)\s+(\d+\.\d+) (execve|exit_group)\((.*)", line)
        if not m or "ENOENT" in line:
            continue
        pid, t, what, rest = m.groups()
        if what == "execve":
            argv = re.search(r"\[(.*?)\]", rest).group(1)
            if "python" in argv.split(",")[0]:
                python.add(pid)
                events.append((float(t), pid, "start " + argv.split(", ", 1)[1][:70]))
        elif pid in python or not events:
            events.append((float(t), pid, "exit"))
    folder = max((Path(env["QHYBRID_HOME"]) / "jobs").iterdir(), key=lambda p: p.stat().st_mtime)
    state = json.loads((folder / "state.json").read_text())
    events += [(state[k], "", f"job {k}") for k in ("created", "started", "ended") if state.get(k)]
    stamps = [float(x) for x in re.findall(r"timestamp=([0-9.]+)", (folder / "logs" / "job.log").read_text())]
    if stamps:
        events += [(stamps[0], "", "first metric"), (stamps[-1], "", "last metric")]
    for t, pid, what in sorted(events):
        print(f"  {t - t0:6.2f} s  {pid:>7}  {what}")


PROBE = """
import sys, time
t0 = time.perf_counter()
import pennylane as qml
from pennylane import numpy as np
n = int(sys.argv[2])
name, _, path = sys.argv[1].partition("+")  # "qhybrid.cpu+engine": small_wires=0
dev = qml.device(name, wires=n, **({"small_wires": 0} if path == "engine" else {}))
@qml.qnode(dev)
def f(x):
    for w in range(n):
        qml.RX(x[w], w)
    for w in range(n - 1):
        qml.CNOT([w, w + 1])
    return qml.expval(qml.Z(0) @ qml.Z(n - 1))
x = np.array([0.1 * (w + 1) for w in range(n)], requires_grad=True)
print(repr(float(f(x))), repr(float(qml.grad(f)(x).sum())))
"""
DEVICES = ("lightning.qubit", "qhybrid.cpu")
ENGINE = "qhybrid.cpu+engine"  # qhybrid.cpu with small_wires=0


def probe(device: str, wires: int, env: dict) -> tuple[float, str]:
    """One fresh process running :data:`PROBE` on ``device``: ``(wall seconds, its output)``."""
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", PROBE, device, str(wires)], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, timeout=900)
    wall = time.perf_counter() - t0
    if out.returncode:
        raise SystemExit(f"{device} at {wires} wires failed:\n{out.stderr[-2000:]}")
    return wall, out.stdout.strip()


def device_startup(wires: list[int], repeats: int, cold: int, cache: Path, *, cold_wires=None,
                   engine_wires=()) -> None:
    """The ``--devices`` table: process start to result, both devices, warm and cold (cold runs at
    ``cold_wires`` only, all sizes when None); ``engine_wires``: also qhybrid.cpu with
    ``small_wires=0`` (every circuit on the engine, torch and numba loaded) at those sizes."""
    env = tree_env(HERE, cache, bytecode=True)
    print(f"load average before: {load()}")
    every = DEVICES + (ENGINE,)
    for n in wires:  # untimed: bytecode, and qhybrid's kernels for this size
        for d in DEVICES + ((ENGINE,) if n in engine_wires else ()):
            probe(d, n, env)
    times = {(d, n, kind): [] for d in every for n in wires for kind in ("warm", "cold")}
    first: dict = {}  # wires -> the values the first run printed
    for n in wires:
        devices = DEVICES + ((ENGINE,) if n in engine_wires else ())
        runs = repeats + (cold if cold_wires is None or n in cold_wires else 0)
        for r in range(runs):
            kind = "warm" if r < repeats else "cold"
            for d in (devices if r % 2 == 0 else devices[::-1]):
                run_env = env
                if kind == "cold":
                    run_env = {**env, "NUMBA_CACHE_DIR": tempfile.mkdtemp(prefix="qhybrid-cold-")}
                wall, printed = probe(d, n, run_env)
                times[d, n, kind].append(wall)
                values = [float(v) for v in printed.split()]
                ref = first.setdefault(n, values)
                if max(abs(a - b) for a, b in zip(values, ref)) > 1e-10:
                    raise SystemExit(f"{d} at {n} wires printed {values}, the other device {ref}")
    print(f"load average after: {load()}\n")
    print("| wires | lightning.qubit warm, median (range) | qhybrid.cpu warm, median (range) | ratio (lq / ours) "
          "| ratio per pair (range) | lightning.qubit cold | qhybrid.cpu cold (empty kernel cache) "
          "| qhybrid.cpu, small_wires=0 (engine) warm |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for n in wires:
        med = {(d, k): statistics.median(times[d, n, k]) if times[d, n, k] else float("nan")
               for d in every for k in ("warm", "cold")}
        lq, ours = med["lightning.qubit", "warm"], med["qhybrid.cpu", "warm"]
        span = {d: f"{min(times[d, n, 'warm']):.2f}-{max(times[d, n, 'warm']):.2f}" for d in DEVICES}
        # each run of one device against the other's run beside it (the same spell of load)
        pairs = sorted(a / b for a, b in zip(times["lightning.qubit", n, "warm"], times["qhybrid.cpu", n, "warm"]))
        print(f"| {n} | {lq:.2f} s ({span['lightning.qubit']}) | {ours:.2f} s ({span['qhybrid.cpu']}) "
              f"| {lq / ours:.2f}x | {statistics.median(pairs):.2f}x ({pairs[0]:.2f}-{pairs[-1]:.2f}) "
              f"| {med['lightning.qubit', 'cold']:.2f} s | {med['qhybrid.cpu', 'cold']:.2f} s | {med[ENGINE, 'warm']:.2f} s |")


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer", type=Path, help="another checkout (its src/ is used)")
    parser.add_argument("--devices", action="store_true", help="qhybrid.cpu vs lightning.qubit, start to result")
    parser.add_argument("--wires", default="2,6,10,14", help="with --devices: wire counts")
    parser.add_argument("--cold", type=int, default=1, help="with --devices: cold runs per size and device")
    parser.add_argument("--cold-wires", default=None, help="with --devices: the sizes with cold runs (default all)")
    parser.add_argument("--engine-wires", default="", help="with --devices: sizes also run with small_wires=0")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", default=",".join(COMMANDS), help="commands, comma-separated")
    parser.add_argument("--bytecode", action="store_true", help="a bytecode cache per tree, as installed")
    parser.add_argument("--stages", action="store_true", help="one traced job run per tree")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "qhybrid-startup",
                        help="where each tree's numba (and bytecode) cache is kept between runs")
    args = parser.parse_args(argv)
    if args.devices:
        sizes = lambda text: [int(w) for w in text.split(",") if w]  # noqa: E731
        device_startup(sizes(args.wires), args.repeats, args.cold, args.cache / "devices",
                       cold_wires=None if args.cold_wires is None else sizes(args.cold_wires),
                       engine_wires=sizes(args.engine_wires))
        return 0
    if args.peer is None:
        parser.error("--peer is required (or --devices)")
    trees = {"ours": HERE, "peer": args.peer.resolve()}
    caches = {k: args.cache / k for k in trees}
    envs = {k: tree_env(t, caches[k], bytecode=args.bytecode) for k, t in trees.items()}
    print(f"ours {trees['ours']}  peer {trees['peer']}  python {sys.version.split()[0]}  cores {os.cpu_count()}")
    print(f"load average before: {load()}")
    for k in trees:  # compile the kernels (and the bytecode) once, untimed
        print(f"warm-up {k}: {timed(COMMANDS['qaoa --nodes 10'], envs[k], trees[k]):.1f} s", flush=True)
    names = [c.strip() for c in args.only.split(",") if c.strip()]
    times = {(k, c): [] for k in trees for c in names}
    for _ in range(args.repeats):
        for c in names:
            for k in trees:
                times[k, c].append(timed(COMMANDS[c], envs[k], trees[k]))
    print(f"load average after: {load()}\n")
    print("| command | ours, median (range) | peer, median (range) | peer / ours |")
    print("| --- | --- | --- | --- |")
    for c in names:
        ours, peer = (statistics.median(times[k, c]) for k in ("ours", "peer"))
        span = {k: f"{min(times[k, c]):.2f}-{max(times[k, c]):.2f}" for k in trees}
        print(f"| `qhybrid {c}` | {ours:.2f} s ({span['ours']}) | {peer:.2f} s ({span['peer']}) | {peer / ours:.2f}x |")
    if args.stages:
        for k in trees:
            print(f"\nstages, {k}:")
            stages(envs[k], trees[k])
    return 0


if __name__ == "__main__":
    sys.exit(main())
