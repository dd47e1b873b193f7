"""A job that prints many metric lines: does the supervisor keep up with the script?

    .venv/bin/python benchmarks/metric_lines.py [--lines 200000] [--repeats 2] [--trees OLD/src NEW/src]

Runs a script that calls ``log_metric`` ``--lines`` times, once bare (``python script.py``, output
to /dev/null) and once as a local job, and prints the job's billed seconds (whole seconds) and its
measured run time (started to ended, the job's start-up included) against the bare run.
With ``--trees``, each measurement alternates between source trees (e.g. main's ``src`` and a
branch's), so both are compared in one run under the same load.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCRIPT = """import sys
from qhybrid.jobs import log_metric
for i in range({lines}):
    log_metric("loss", 1.0 / (i + 1), iteration_number=i)
"""
JOB = """import json, sys, time
from qhybrid import Job
t0 = time.time()
job = Job.create("local:qhybrid/qhybrid.cpu", sys.argv[1])
job.wait(timeout=3600, poll=0.05)
d = job.describe()
print(json.dumps({"state": str(d["state"]), "billed": d["billed_seconds"], "run": d.get("measured_seconds"),
                  "wall": time.time() - t0,
                  "rows": len(job.metrics().get("loss", []))}))
"""


def run_once(tree: str | None, script: Path, home: str) -> dict:
    env = {**os.environ, "QHYBRID_HOME": home}
    if tree:
        env["PYTHONPATH"] = tree
    t0 = time.time()
    subprocess.run([sys.executable, str(script)], env=env, stdout=subprocess.DEVNULL, check=True)
    bare = time.time() - t0
    out = subprocess.run([sys.executable, "-c", JOB, str(script)], env=env, capture_output=True, text=True,
                         check=True)
    return {"bare_s": round(bare, 2), **json.loads(out.stdout.strip().splitlines()[-1])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--trees", nargs="*", default=[None])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        script = Path(home) / "metrics_job.py"
        script.write_text(SCRIPT.format(lines=args.lines))
        for r in range(args.repeats):
            for tree in args.trees:
                res = run_once(tree, script, home)
                ratio = res["billed"] / max(res["bare_s"], 1e-9)
                run = f"  run/bare = {res['run'] / max(res['bare_s'], 1e-9):.2f}" if res.get("run") else ""
                print(f"repeat {r} tree {tree or '(installed)'}: {res}  billed/bare = {ratio:.1f}{run}", flush=True)


if __name__ == "__main__":
    main()
