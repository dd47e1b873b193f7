"""The job scripts under the Braket-style notebooks run unmodified through ``qhybrid run``."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from braketkit import LIGHTNING, QHYBRID_CPU, SONAR, on


def _run(args: list[str]) -> dict:
    done = subprocess.run([sys.executable, "-m", "qhybrid", "run", *args, "--json"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("device", on(LIGHTNING))  # ours runs the same script in the embedded notebook
def test_embedded_qaoa_script(example, device):
    example("embedded")
    hp = {"n_nodes": 4, "n_edges": 4, "n_layers": 2, "iterations": 3, "stepsize": 0.1, "seed": 42,
          "diff_method": "adjoint"}
    out = _run(["qaoa", "--entry-point", "qaoa.qaoa_algorithm", "--device", device,
                *[a for k, v in hp.items() for a in ("--hp", f"{k}={v}")]])
    assert out["state"] == "COMPLETED" and out["result"]["cost"] == pytest.approx(-1.2222206870310903, abs=1e-8)


@pytest.mark.parametrize("device", on(QHYBRID_CPU))
def test_parallel_training_single_script(example, device):
    work = example("parallel")
    (work / "data").mkdir()
    (work / "data" / "sonar.all-data").write_text(SONAR.read_text())
    hp = {"nwires": 2, "ndata": 16, "batch_size": 8, "epochs": 1, "lr": 0.1, "seed": 42}
    out = _run(["qml_script", "--entry-point", "qml_script.train_single", "--device", device,
                "--input", "input-data=data/sonar.all-data",
                *[a for k, v in hp.items() for a in ("--hp", f"{k}={v}")]])
    assert out["state"] == "COMPLETED" and set(out["result"]) == {"last loss"}
