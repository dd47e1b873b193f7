"""SPSA on a 4-qubit hardware-efficient ansatz: perturbations from numpy's global generator,
seeded before the device is created (the device's default seed draws from it, as lightning's)."""
import pennylane as qml
from pennylane import numpy as np

from _report import device_name, exact

np.random.seed(42)
dev = qml.device(device_name(), wires=4)


@qml.qnode(dev)
def cost(params):
    qml.StronglyEntanglingLayers(params, wires=range(4))
    return qml.expval(qml.Z(0) @ qml.Z(1) + qml.X(2) - 0.5 * qml.Z(3))


shape = qml.StronglyEntanglingLayers.shape(n_layers=2, n_wires=4)
params = np.random.normal(0, np.pi, shape, requires_grad=True)
opt = qml.SPSAOptimizer(maxiter=20)
costs = []
for _ in range(6):
    params, c = opt.step_and_cost(cost, params)
    costs.append(c)
exact("costs", costs)
