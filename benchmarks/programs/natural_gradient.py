"""Quantum natural gradient: qml.metric_tensor (block-diagonal) and QNGOptimizer."""
import pennylane as qml
from pennylane import numpy as np

from _report import device_name, exact

dev = qml.device(device_name(), wires=3)


@qml.qnode(dev)
def circuit(params):
    qml.RX(params[0], 0)
    qml.RY(params[1], 1)
    qml.CNOT([0, 1])
    qml.RZ(params[2], 2)
    qml.CNOT([1, 2])
    qml.RY(params[3], 0)
    return qml.expval(qml.X(0) @ qml.Z(1) + 0.5 * qml.Y(2))


params = np.array([0.432, -0.123, 0.543, 0.233], requires_grad=True)
exact("metric_tensor", qml.metric_tensor(circuit, approx="block-diag")(params))
opt = qml.QNGOptimizer(0.05)
costs = []
for _ in range(5):
    params, c = opt.step_and_cost(circuit, params)
    costs.append(c)
exact("costs", costs)
exact("params", params)
