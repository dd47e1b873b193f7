"""``qhybrid qaoa``: options to hyperparameters, presets, the answer printed, --json."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from qhybrid.cli.qaoa import job_kwargs
from qhybrid.errors import DeviceError, SpecError


def test_defaults_converge_and_presets_fix_the_seed_study():
    hp = job_kwargs(device="qhybrid.cpu")["hyperparameters"]
    assert hp["iterations"] == "auto" and hp["n_nodes"] == "18" and "stepsize" not in hp
    seed = job_kwargs(device="qhybrid.cpu", preset="SEED-TIMING")["hyperparameters"]
    assert (seed["iterations"], seed["init"], seed["starts"], seed["stepsize"]) == ("5", "seed", "1", "0.1")
    assert job_kwargs(device="qhybrid.cpu", preset="seed-timing", iterations=7)["hyperparameters"]["iterations"] == "7"
    kw = job_kwargs(device="qhybrid.cpu", iterations=12, stepsize=0.2, starts=2, graph=None)
    assert kw["hyperparameters"]["iterations"] == "12" and kw["hyperparameters"]["stepsize"] == "0.2"
    assert kw["instance_config"].instanceType == "ml.m5.2xlarge"


def test_bad_values_are_caught_before_submitting(tmp_path):
    with pytest.raises(SpecError, match="n_layers"):
        job_kwargs(device="qhybrid.cpu", layers=0)
    with pytest.raises(SpecError, match="no such file"):
        job_kwargs(device="qhybrid.cpu", graph=str(tmp_path / "missing.txt"))
    with pytest.raises(DeviceError, match="did you mean"):
        job_kwargs(device="lightning.qubitt")


def test_qaoa_prints_the_answer(cli):
    result = cli("qaoa", "--nodes", "8", "--edges", "12", "--seed", "5", "--device", "qhybrid.cpu")
    assert result.exit_code == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith("cut ") and first.endswith("(found)") and "of 12 edges — optimum" in first
    for words in ("best bitstring", "approximation ratio", "expectation", "converged", "p=1:", "p=2:"):
        assert words in result.stdout
    assert "cost: $" in result.stderr and "energy " in result.stderr and "cost " not in result.stdout.lower()


def test_qaoa_json_is_one_document_with_exact_iterations(cli):
    result = cli("qaoa", "--nodes", "5", "--edges", "6", "--iterations", "2", "--problem", "MaxCut", "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["state"] == "COMPLETED" and doc["result"]["n_qubits"] == 5 and doc["result"]["iterations"] == 2
    assert doc["instance_type"] == "ml.m5.2xlarge" and doc["cost_usd"] > 0
    assert "iteration 2/2" in result.stderr


def test_qaoa_on_a_bare_pennylane_device(cli):
    result = cli("qaoa", "--nodes", "4", "--edges", "4", "--layers", "1", "--iterations", "2",
                 "--device", "default.qubit", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["result"]["device"] == "local:pennylane/default.qubit"


def test_qaoa_seed_timing_preset_runs_five_iterations(cli):
    result = cli("qaoa", "--nodes", "6", "--edges", "8", "--preset", "seed-timing", "--json")
    doc = json.loads(result.stdout)
    assert doc["result"]["iterations"] == 5 and doc["result"]["layers"] == [2] * 5


def _imported(log: str) -> set[str]:
    """Module names from ``-X importtime`` lines (``import time: self | cumulative | name``)."""
    return {line.rsplit("|", 1)[1].strip() for line in log.splitlines() if line.startswith("import time:")
            and "|" in line}


def test_qaoa_start_up_imports_no_torch_and_the_cli_no_numba(_isolated_home):
    """A real `qhybrid qaoa` on the numba path: the CLI process imports neither torch nor numba
    (pre-flight and estimate are arithmetic), the job process numba but never torch."""
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1", "QHYBRID_HOME": str(_isolated_home)}
    proc = subprocess.run([sys.executable, "-m", "qhybrid", "qaoa", "--nodes", "5", "--edges", "6", "--iterations",
                           "1", "--device", "qhybrid.cpu", "--quiet", "--json"],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    assert doc["state"] == "COMPLETED"
    cli = _imported(proc.stderr)
    assert {"qhybrid.cli", "qhybrid.submit.preflight"} <= cli
    assert not {"torch", "numba"} & cli, sorted({"torch", "numba"} & cli)
    # start-up (issue 15): no pydantic (option values), numpy or networkx in the command, nor a
    # second interpreter for the supervisor; no networkx or scipy.linalg in the job
    assert not {"pydantic", "numpy", "networkx"} & cli, sorted({"pydantic", "numpy", "networkx"} & cli)
    job = _imported((_isolated_home / "jobs" / doc["job"] / "logs" / "rank-0.log").read_text())
    assert {"numba", "qhybrid.qaoa.numba_kernels", "qhybrid.workloads.qaoa_optimize"} <= job
    assert not {"torch", "networkx", "scipy.linalg"} & job, sorted({"torch", "networkx", "scipy.linalg"} & job)
    supervisor = (_isolated_home / "jobs" / doc["job"] / "logs" / "supervisor.log").read_text()
    assert "qhybrid.jobs.supervisor" in _imported(supervisor) and "encodings" not in _imported(supervisor)
