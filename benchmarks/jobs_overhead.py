"""Overhead of a job: from ``Job.create`` to the script's first line, and to ``wait()`` returning.

    .venv/bin/python benchmarks/jobs_overhead.py [--repeats 10]

Runs a tiny script (its first line records ``time.time()``) as local
subprocess jobs and as in-process jobs, in a throwaway QHYBRID_HOME, and prints
the median and best of each. Side by side with a bare ``python script.py`` for
the interpreter's own start-up cost on this machine.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TINY = """import time; T0 = time.time()
from qhybrid.jobs import save_job_result
save_job_result({"first_line": T0})
"""
BARE = "import time, sys; print(time.time())\n"


def measure(repeats: int, in_process: bool) -> tuple[list[float], list[float]]:
    from qhybrid import Job

    script = Path(os.environ["QHYBRID_HOME"]) / "tiny.py"
    script.write_text(TINY)
    first, total = [], []
    for _ in range(repeats):
        t0 = time.time()
        job = Job.create("local:qhybrid/qhybrid.cpu", script, in_process=in_process)
        result = job.wait(timeout=60, poll=0.01).result()
        total.append(time.time() - t0)
        first.append(result["first_line"] - t0)
    return first, total


def bare(repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        t0 = time.time()
        line = subprocess.run([sys.executable, "-c", BARE], capture_output=True, text=True, check=True).stdout
        out.append(float(line) - t0)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ["QHYBRID_HOME"] = home
        rows = {}
        for label, in_process in (("local subprocess job", False), ("in-process job", True)):
            first, total = measure(args.repeats, in_process)
            rows[label] = {"first_line_s": first, "until_wait_returns_s": total}
        rows["bare python -c (reference)"] = {"first_line_s": bare(args.repeats), "until_wait_returns_s": []}
    summary = {
        label: {k: {"median": statistics.median(v), "best": min(v)} for k, v in r.items() if v}
        for label, r in rows.items()
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    print(f"{'':<28} {'create -> first line':>22} {'create -> wait() returns':>26}   (median / best, s)")
    for label, r in summary.items():
        fl = r["first_line_s"]
        wt = r.get("until_wait_returns_s")
        wt_s = f"{wt['median']:.3f} / {wt['best']:.3f}" if wt else "-"
        print(f"{label:<28} {fl['median']:>11.3f} / {fl['best']:.3f} {wt_s:>26}")


if __name__ == "__main__":
    main()
