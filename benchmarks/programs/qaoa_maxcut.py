"""QAOA Max-Cut with qml.qaoa on a 5-node graph, p=2, gradient descent (adjoint)."""
import networkx as nx
import pennylane as qml
from pennylane import numpy as np

from _report import device_name, exact

graph = nx.Graph([(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (0, 2)])
cost_h, mixer_h = qml.qaoa.maxcut(graph)
dev = qml.device(device_name(), wires=5)


def layer(gamma, alpha):
    qml.qaoa.cost_layer(gamma, cost_h)
    qml.qaoa.mixer_layer(alpha, mixer_h)


@qml.qnode(dev)
def cost(params):
    for w in range(5):
        qml.Hadamard(w)
    qml.layer(layer, 2, params[0], params[1])
    return qml.expval(cost_h)


params = np.array([[0.5, 0.5], [0.5, 0.5]], requires_grad=True)
opt = qml.GradientDescentOptimizer(stepsize=0.1)
costs = []
for _ in range(8):
    params, c = opt.step_and_cost(cost, params)
    costs.append(c)
exact("costs", costs)
exact("params", params)
