"""Our own real-style PennyLane programs (``benchmarks/programs/``) on two devices, side by side.

    .venv/bin/python benchmarks/programs.py [--devices lightning.qubit,qhybrid.cpu] [--only a,b] [--repeats 1]

Each program takes the device name as its argument and prints its numbers (``exact``,
``sampled`` and ``text`` lines, see ``programs/_report.py``). Every program runs in a fresh
process per device, the devices taking turns program by program (a busy spell on a shared
machine falls on both); the printed numbers are compared (exact ones to 1e-8, sampled ones
within five standard errors of their difference, text as it is) and the end-to-end times,
process start to exit, are tabled with the ratio. The first round is untimed when
``--warm`` is given (kernel caches filled). Exits 1 when a program fails or its numbers differ.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
EXACT_TOL = 1e-8


def program_names() -> list[str]:
    """The programs, by file stem."""
    return sorted(p.stem for p in PROGRAMS.glob("*.py") if not p.stem.startswith("_"))


def run_program(name: str, device: str, *, timeout: float = 900.0) -> tuple[dict, float]:
    """Run one program on one device in a fresh process: ``({label: (kind, values)}, seconds)``.

    Raises:
        RuntimeError: the program exited non-zero (its stderr's tail in the message).
    """
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, str(PROGRAMS / f"{name}.py"), device], cwd=PROGRAMS, env=env,
                         capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - t0
    if out.returncode:
        raise RuntimeError(f"{name} on {device} failed:\n{out.stderr[-3000:]}")
    found = {}
    for line in out.stdout.splitlines():
        kind, _, rest = line.partition(" ")
        label, _, values = rest.partition(" ")
        if kind in ("exact", "sampled"):
            found[label] = (kind, [float(v) for v in values.split()])
        elif kind == "text":
            found[label] = (kind, values)
    return found, wall


def differences(a: dict, b: dict) -> list[str]:
    """What differs between two programs' printed numbers (empty when they agree)."""
    out = []
    for label in sorted(set(a) | set(b)):
        if label not in a or label not in b:
            out.append(f"{label}: printed by one device only")
            continue
        (kind, x), (_, y) = a[label], b[label]
        if kind == "text":
            if x != y:
                out.append(f"{label}: {x!r} != {y!r}")
        elif kind == "exact":
            if len(x) != len(y) or max((abs(u - v) for u, v in zip(x, y)), default=0.0) > EXACT_TOL:
                worst = max((abs(u - v) for u, v in zip(x, y)), default=float("nan"))
                out.append(f"{label}: differ by {worst:.3g} (> {EXACT_TOL})")
        else:
            (u, su), (v, sv) = x, y
            if abs(u - v) > 5 * (su**2 + sv**2) ** 0.5:
                out.append(f"{label}: {u:.4f} vs {v:.4f}, beyond 5 standard errors")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", default="lightning.qubit,qhybrid.cpu", help="peer,ours")
    parser.add_argument("--only", default="", help="programs, comma-separated (default: all)")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--warm", action="store_true", help="one untimed round first")
    args = parser.parse_args(argv)
    peer, ours = args.devices.split(",")
    names = [n for n in args.only.split(",") if n] or program_names()
    print(f"python {sys.version.split()[0]}  cores {os.cpu_count()}  load before {os.getloadavg()[0]:.2f}")
    if args.warm:
        for name in names:
            for dev in (peer, ours):
                run_program(name, dev)
    times = {(n, d): [] for n in names for d in (peer, ours)}
    results, failed = {}, False
    for r in range(args.repeats):
        for name in names:
            order = (peer, ours) if r % 2 == 0 else (ours, peer)
            for dev in order:
                try:
                    found, wall = run_program(name, dev)
                except RuntimeError as exc:  # a row saying so, and the rest of the table
                    found, wall = {"failed": ("text", str(exc).splitlines()[-1][:120])}, float("nan")
                times[name, dev].append(wall)
                results[name, dev] = found
                print(f"  {name} on {dev}: {wall:.2f} s", file=sys.stderr, flush=True)
    print(f"load after {os.getloadavg()[0]:.2f}\n")
    print(f"| program | {peer} | {ours} | {peer} / {ours} | numbers |")
    print("| --- | --- | --- | --- | --- |")
    total = {peer: 0.0, ours: 0.0}
    for name in names:
        t = {d: statistics.median(times[name, d]) for d in (peer, ours)}
        for d in t:
            total[d] += t[d]
        diff = differences(results[name, peer], results[name, ours])
        failed = failed or bool(diff)
        n_numbers = len(results[name, ours])
        verdict = "agree ({} lines)".format(n_numbers) if not diff else "; ".join(diff)
        print(f"| {name} | {t[peer]:.2f} s | {t[ours]:.2f} s | {t[peer] / t[ours]:.2f}x | {verdict} |")
    print(f"| total | {total[peer]:.2f} s | {total[ours]:.2f} s | {total[peer] / total[ours]:.2f}x | |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
