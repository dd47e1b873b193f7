"""The QAOA workload as a job: the answer, fast path == PennyLane path, checkpoint resume, presets."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import qhybrid.workloads.qaoa as workload
from qhybrid.errors import SpecError
from qhybrid.jobs.script import STARTED_MARK
from qhybrid.submit import Job

SOURCE = str(Path(workload.__file__))
KEYS = {"summary", "params", "energy", "best_bitstring", "best_value", "best_cut", "optimum", "found",
        "approximation_ratio", "best_approximation_ratio", "iteration_seconds", "energies", "device", "n_qubits"}
SMALL = {"n_nodes": "6", "n_edges": "8", "n_layers": "2", "iterations": "3", "seed": "7"}
SEED = workload.PRESETS["seed-timing"]


@pytest.fixture(autouse=True)
def _own_cwd(tmp_path, monkeypatch):
    """Direct ``run`` calls keep their checkpoints in ./qhybrid-local: one per test."""
    monkeypatch.chdir(tmp_path)


def _job(device="local:qhybrid/qhybrid.cpu", hp=SMALL, **kwargs):
    return Job.create(device=device, source_module=SOURCE, entry_point="qaoa", hyperparameters=hp,
                      in_process=True, **kwargs)


def test_in_process_job_result():
    job = _job()
    result = job.result()
    assert KEYS <= set(result)
    assert result["n_qubits"] == 6 and len(result["iteration_seconds"]) == result["iterations"] == 3
    assert np.asarray(result["params"]).shape == (2, 2)
    assert result["optimum"] <= result["best_value"] <= 0
    assert 0 < result["approximation_ratio"] <= result["best_approximation_ratio"] <= 1
    energies = [c for c in job.metrics()["energy"] if c is not None]
    assert energies == pytest.approx(result["energies"])
    assert "Cost" not in job.metrics()


def test_default_converges_and_finds_the_optimum():
    result = _job(hp={"n_nodes": "10", "n_edges": "14", "seed": "3"}).result()
    assert result["found"] and result["best_value"] == result["optimum"]
    assert all(result["converged"]) and result["iterations"] < 2 * 300
    assert result["layers"][0] == 1 and result["layers"][-1] == 2  # layer by layer
    assert result["approximation_ratio"] >= 0.8
    assert result["summary"] == f"cut {result['best_cut']:g} of 14 edges — optimum {-result['optimum']:g} (found)"


def test_iterations_n_means_exactly_n():
    result = _job(hp={"n_nodes": "8", "n_edges": "10", "iterations": "7"}).result()
    assert result["iterations"] == 7 and result["layers"] == [2] * 7


def test_subprocess_job():
    job = Job.create(device="local:qhybrid/qhybrid.cpu", source_module=SOURCE, entry_point="qaoa",
                     hyperparameters={**SMALL, "iterations": "2", "problem": "maxclique"})
    result = job.wait(timeout=120).result()
    assert KEYS - {"best_cut"} <= set(result) and result["problem"] == "maxclique"
    assert "clique" in result["summary"]
    # what the progress names before the first metrics (cli.workload.Display): preparing, then running
    lines = job.logs().splitlines()
    marks = [i for i, line in enumerate(lines) if line.startswith(STARTED_MARK)]
    first_metric = next(i for i, line in enumerate(lines) if "Metrics -" in line)
    assert [lines[i][len(STARTED_MARK):].split()[0] for i in marks] == ["preparing", "running"]
    assert marks[-1] < first_metric


def test_fast_path_equals_pennylane_trajectory():
    settings = workload.parse_settings({**SMALL, **SEED, "iterations": "4"})
    g = nx.gnm_random_graph(6, 8, seed=7)
    fast = workload.run(settings, device_string="local:qhybrid/qhybrid.cpu", graph=g)
    pl = workload.run(settings, device_string="local:pennylane/default.qubit", graph=g)
    np.testing.assert_allclose(fast["energies"], pl["energies"], atol=1e-10)
    np.testing.assert_allclose(fast["params"], pl["params"], atol=1e-10)
    assert fast["energy"] == pytest.approx(pl["energy"], abs=1e-10)


def test_seed_timing_preset_reproduces_the_seed_trajectory():
    """The seed's study: Adam(0.1) from 0.01 * uniform, the energy before each of 5 steps."""
    from qhybrid.qaoa import QAOA

    settings = workload.parse_settings({**SMALL, **SEED})
    g = nx.gnm_random_graph(6, 8, seed=7)
    result = workload.run(settings, device_string="local:qhybrid/qhybrid.cpu", graph=g)
    q, x = QAOA(g), 0.01 * np.random.default_rng(7).uniform(size=(2, 2))
    m = v = np.zeros_like(x)
    expected = []
    for t in range(1, 6):
        e, grad = q.energy_and_grad(x)
        expected.append(e)
        m, v = 0.9 * m + 0.1 * grad, 0.999 * v + 0.001 * grad**2
        x = x - 0.1 * np.sqrt(1 - 0.999**t) / (1 - 0.9**t) * m / (np.sqrt(v) + 1e-8)
    np.testing.assert_allclose(result["energies"], expected, atol=1e-12)
    np.testing.assert_allclose(result["params"], x, atol=1e-12)


@pytest.mark.parametrize("hp", [{**SMALL, "iterations": "4"}, {"n_nodes": "6", "n_edges": "8", "seed": "7"}])
def test_checkpoint_resume_continues_the_trajectory(hp):
    full = _job(hp=hp).result()
    cut = {**hp, "iterations": "2"} if hp.get("iterations") else {**hp, "max_iterations": "3"}
    first = _job(hp=cut)
    resumed = _job(hp=hp, copy_checkpoints_from_job=first.name)
    result = resumed.result()
    if hp.get("iterations"):
        assert len(result["iteration_seconds"]) == 4
        np.testing.assert_allclose(result["energies"], full["energies"], atol=1e-12)
        np.testing.assert_allclose(result["params"], full["params"], atol=1e-12)
    assert "resuming QAOA from the checkpoint" in resumed.logs()


def test_standalone_run_says_when_it_resumes(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AMZN_BRAKET")}
    env["AMZN_BRAKET_HP_FILE"] = str(tmp_path / "hp.json")
    (tmp_path / "hp.json").write_text('{"n_nodes": "5", "n_edges": "6", "iterations": "2"}')
    cmd = [sys.executable, "-m", "qhybrid.workloads.qaoa"]
    first = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    assert "resuming" not in first.stderr and "edges — optimum" in first.stdout
    second = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stderr
    lines = [line for line in second.stderr.splitlines() if "resuming" in line]
    assert len(lines) == 1 and "qhybrid-local" in lines[0] and "standalone" in lines[0]


def test_graph_from_input_channel(tmp_path):
    edges = tmp_path / "graph.txt"
    edges.write_text("# weighted triangle plus a tail\n0 1 2\n1 2 1\n0 2 1\n2 3 1\n")
    result = _job(hp={"n_layers": "1", "iterations": "1"}, input_data={"input-graph": str(edges)}).result()
    assert result["n_qubits"] == 4 and result["optimum"] == -4.0  # cut {0, 3} | {1, 2}: 2 + 1 + 1
    assert result["summary"].startswith("cut weight ")


def test_bad_hyperparameters():
    with pytest.raises(SpecError, match="n_layers"):
        workload.parse_settings({"n_layers": "zero"})
    with pytest.raises(SpecError, match="maxcut, maxclique"):
        workload.parse_settings({"problem": "tsp"})
    with pytest.raises(SpecError, match="unknown hyperparameter"):
        workload.parse_settings({"layers": "2"})
    with pytest.raises(SpecError, match="n_edges"):
        workload.parse_settings({"n_nodes": "4", "n_edges": "7"})
    with pytest.raises(SpecError, match="interp, seed"):
        workload.parse_settings({"init": "zeros"})
    assert workload.parse_settings({"iterations": "AUTO"}).iterations is None
