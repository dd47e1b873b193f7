"""``benchmarks/gpu_check.py --interpret`` (the Triton section on CPU, tiny sizes) runs to the end,
passes its checks and writes its JSON and markdown: the script a first GPU will run, proven here.
About a minute of interpreter time on a quiet 2-core machine: slow."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_gpu_check_interpret(tmp_path):
    pytest.importorskip("triton")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("OUT", None)
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_check.py"), "--interpret",
                           "--repeats", "1", "--out", str(tmp_path)], env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((tmp_path / "gpu_check.json").read_text())
    assert report["checks"]["triton"]["status"] == "PASS"
    workloads = {r["workload"] for r in report["rows"]}
    assert {"copy bandwidth (GB/s)", "pass: mixer W D' W, high bits", "QAOA Max-Cut e+g p=2",
            "pass: CNOT (control 0, target n-1)", "pass: sum of 2 Pauli words into out"} <= workloads
    assert all("Error" not in str(r.get("note", "")) or "lightning" in r["workload"] for r in report["rows"])
    assert "### timings" in (tmp_path / "gpu_check.md").read_text()
