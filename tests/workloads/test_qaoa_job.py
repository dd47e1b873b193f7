"""The QAOA workload as a job: result keys, fast path == PennyLane path, checkpoint resume, CLI."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import qhybrid.workloads.qaoa as workload
from qhybrid.errors import SpecError
from qhybrid.jobs import Job

SOURCE = str(Path(workload.__file__))
KEYS = {"params", "cost", "best_bitstring", "best_value", "optimum", "approximation_ratio",
        "iteration_seconds", "device", "n_qubits"}
SMALL = {"n_nodes": "6", "n_edges": "8", "n_layers": "2", "iterations": "3", "seed": "7"}


def _job(device="local:qhybrid/qhybrid.cpu", hp=SMALL, **kwargs):
    return Job.create(device=device, source_module=SOURCE, entry_point="qaoa", hyperparameters=hp,
                      in_process=True, **kwargs)


def test_in_process_job_result():
    job = _job()
    result = job.result()
    assert KEYS <= set(result)
    assert result["n_qubits"] == 6 and len(result["iteration_seconds"]) == 3
    assert np.asarray(result["params"]).shape == (2, 2)
    assert result["optimum"] <= result["best_value"] <= 0
    assert 0 < result["approximation_ratio"] <= 1
    costs = [c for c in job.metrics()["Cost"] if c is not None]
    assert costs == pytest.approx(result["costs"])


def test_subprocess_job():
    job = Job.create(device="local:qhybrid/qhybrid.cpu", source_module=SOURCE, entry_point="qaoa",
                     hyperparameters={**SMALL, "iterations": "2", "problem": "maxclique"})
    result = job.wait(timeout=120).result()
    assert KEYS <= set(result) and result["problem"] == "maxclique"


def test_fast_path_equals_pennylane_trajectory():
    settings = workload.parse_settings({**SMALL, "iterations": "4"})
    import networkx as nx

    g = nx.gnm_random_graph(6, 8, seed=7)
    fast = workload.run(settings, device_string="local:qhybrid/qhybrid.cpu", graph=g)
    pl = workload.run(settings, device_string="local:pennylane/default.qubit", graph=g)
    np.testing.assert_allclose(fast["costs"], pl["costs"], atol=1e-10)
    np.testing.assert_allclose(fast["params"], pl["params"], atol=1e-10)
    assert fast["cost"] == pytest.approx(pl["cost"], abs=1e-10)


def test_checkpoint_resume_continues_the_trajectory():
    full = _job(hp={**SMALL, "iterations": "4"}).result()
    first = _job(hp={**SMALL, "iterations": "2"})
    resumed = _job(hp={**SMALL, "iterations": "4"}, copy_checkpoints_from_job=first.name).result()
    assert len(resumed["iteration_seconds"]) == 4
    np.testing.assert_allclose(resumed["costs"], full["costs"], atol=1e-12)
    np.testing.assert_allclose(resumed["params"], full["params"], atol=1e-12)


def test_graph_from_input_channel(tmp_path):
    edges = tmp_path / "graph.txt"
    edges.write_text("# weighted triangle plus a tail\n0 1 2\n1 2 1\n0 2 1\n2 3 1\n")
    result = _job(hp={"n_layers": "1", "iterations": "1"}, input_data={"input-graph": str(edges)}).result()
    assert result["n_qubits"] == 4 and result["optimum"] == -4.0  # cut {0, 3} | {1, 2}: 2 + 1 + 1


def test_bad_hyperparameters():
    with pytest.raises(SpecError, match="n_layers"):
        workload.parse_settings({"n_layers": "zero"})
    with pytest.raises(SpecError, match="maxcut, maxclique"):
        workload.parse_settings({"problem": "tsp"})
    with pytest.raises(SpecError, match="unknown hyperparameter"):
        workload.parse_settings({"layers": "2"})
    with pytest.raises(SpecError, match="n_edges"):
        workload.parse_settings({"n_nodes": "4", "n_edges": "7"})


def test_cli_json(capsys):
    from qhybrid.cli import main

    status = main(["qaoa", "--nodes", "5", "--edges", "6", "--iterations", "2", "--json"])
    out = capsys.readouterr()
    assert status == 0
    data = json.loads(out.out.strip().splitlines()[-1])
    assert KEYS <= set(data) and data["n_qubits"] == 5
    assert "ml.m5.2xlarge" in out.err and "cost: $" in out.err
    assert "iteration 2/2" in out.err


def test_cli_rejects_bad_values(capsys):
    from qhybrid.cli import main

    assert main(["qaoa", "--layers", "0"]) == 1
    assert "n_layers" in capsys.readouterr().err
    assert main(["qaoa", "--device", "local:qhybrid/qhybrid.tpu"]) == 1
