"""Max-Clique QAOA trained with Adam; reads the Braket job contract, saves params and the final cost."""
import json
import os

import networkx as nx
import pennylane as qml
from pennylane import numpy as np

from qaoa.utils import get_device
from qhybrid.braket import save_job_result
from qhybrid.braket.metrics import log_metric


def main():
    with open(os.environ["AMZN_BRAKET_HP_FILE"]) as f:
        hp = json.load(f)
    print("hyperparams:", hp)
    n_nodes, n_layers = int(hp["n_nodes"]), int(hp["n_layers"])
    iterations, seed = int(hp["iterations"]), int(hp["seed"])

    device = get_device(n_nodes)
    graph = nx.gnm_random_graph(n_nodes, int(hp["n_edges"]), seed=seed)
    cost_h, mixer_h = qml.qaoa.max_clique(graph, constrained=False)

    def qaoa_layer(gamma, alpha):
        qml.qaoa.cost_layer(gamma, cost_h)
        qml.qaoa.mixer_layer(alpha, mixer_h)

    @qml.qnode(device, diff_method=hp["diff_method"])
    def cost_function(params):
        for wire in range(n_nodes):
            qml.Hadamard(wires=wire)
        qml.layer(qaoa_layer, n_layers, params[0], params[1])
        return qml.expval(cost_h)

    np.random.seed(seed)
    params = np.random.uniform(size=[2, n_layers])
    opt = qml.AdamOptimizer(stepsize=float(hp["stepsize"]))
    for i in range(iterations):
        params, cost_before = opt.step_and_cost(cost_function, params)
        log_metric(metric_name="Cost", value=cost_before, iteration_number=i)
    final_cost = float(cost_function(params))
    log_metric(metric_name="Cost", value=final_cost, iteration_number=iterations)
    save_job_result({"params": params.tolist(), "cost": final_cost})


if __name__ == "__main__":
    main()
