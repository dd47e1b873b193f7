"""Max-Clique by QAOA through a PennyLane QNode, trained with Adam: a seed-style job script.

The device comes from the job's device string (``AMZN_BRAKET_DEVICE_ARN``, e.g.
``local:qhybrid/qhybrid.cpu`` or ``local:pennylane/lightning.qubit``), so swapping
simulators is a change of ``--device`` and nothing else::

    qhybrid run examples/qaoa_max_clique.py --device qhybrid.cpu --hp n_nodes=16 --hp n_layers=3
    qhybrid run examples/qaoa_max_clique.py --device lightning.qubit --hp iterations=5

Hyperparameters (strings, defaults in ``DEFAULTS``): ``n_nodes``, ``n_edges`` (a
``gnm_random_graph`` with ``seed``), ``n_layers`` (p), ``iterations`` (Adam steps),
``stepsize``, ``diff_method``. Each step logs ``Cost`` and ``step_seconds`` metrics; the
result holds the parameters, the final cost and the time of every step. Also runs as a
plain script (``python examples/qaoa_max_clique.py``, on qhybrid.cpu).
"""
from __future__ import annotations

import json
import os
import time

import networkx as nx
import pennylane as qml
from pennylane import numpy as pnp

DEFAULTS = {"n_nodes": "16", "n_edges": "30", "n_layers": "3", "iterations": "5", "stepsize": "0.1",
            "seed": "1967", "diff_method": "adjoint"}


def hyperparameters() -> dict:
    """The job's hyperparameters over ``DEFAULTS`` (the defaults alone outside a job)."""
    path = os.environ.get("AMZN_BRAKET_HP_FILE")
    given = json.load(open(path)) if path else {}
    return {**DEFAULTS, **given}


def device(n_wires: int):
    """The PennyLane device named by the job's device string (``local:<provider>/<name>``)."""
    arn = os.environ.get("AMZN_BRAKET_DEVICE_ARN", "local:qhybrid/qhybrid.cpu")
    return qml.device(arn.rpartition("/")[2], wires=n_wires)


def cost_qnode(dev, *, n_nodes: int, n_edges: int, n_layers: int, seed: int, diff_method: str = "adjoint"):
    """``(qnode, cost_h)``: the expected Max-Clique cost after p QAOA layers, on a gnm graph."""
    graph = nx.gnm_random_graph(n_nodes, n_edges, seed=seed)
    cost_h, mixer_h = qml.qaoa.max_clique(graph, constrained=False)

    def layer(gamma, alpha):
        qml.qaoa.cost_layer(gamma, cost_h)
        qml.qaoa.mixer_layer(alpha, mixer_h)

    @qml.qnode(dev, diff_method=diff_method)
    def cost(params):
        for wire in range(n_nodes):
            qml.Hadamard(wires=wire)
        qml.layer(layer, n_layers, params[0], params[1])
        return qml.expval(cost_h)

    return cost, cost_h


def start(n_layers: int, seed: int):
    """The seed's start: uniform angles in [0, 1), trainable."""
    return pnp.array(pnp.random.default_rng(seed).uniform(size=(2, n_layers)), requires_grad=True)


def main() -> None:
    from qhybrid.braket import save_job_result
    from qhybrid.braket.metrics import log_metric

    hp = hyperparameters()
    n_nodes, n_layers, seed = int(hp["n_nodes"]), int(hp["n_layers"]), int(hp["seed"])
    cost, _ = cost_qnode(device(n_nodes), n_nodes=n_nodes, n_edges=int(hp["n_edges"]), n_layers=n_layers,
                         seed=seed, diff_method=hp["diff_method"])
    params = start(n_layers, seed)
    opt = qml.AdamOptimizer(stepsize=float(hp["stepsize"]))
    steps = []
    for i in range(int(hp["iterations"])):
        t0 = time.perf_counter()
        params, before = opt.step_and_cost(cost, params)
        steps.append(time.perf_counter() - t0)
        log_metric(metric_name="Cost", value=float(before), iteration_number=i)
        log_metric(metric_name="step_seconds", value=steps[-1], iteration_number=i)
    final = float(cost(params))
    save_job_result({"params": params.tolist(), "cost": final, "step_seconds": steps})


if __name__ == "__main__":
    main()
