"""Data re-uploading classifier on two qubits (Adam, a few steps on a seeded dataset)."""
import pennylane as qml
from pennylane import numpy as np

from _report import device_name, exact

np.random.seed(1)
xs = np.random.uniform(-1, 1, (12, 2), requires_grad=False)
ys = np.where(xs[:, 0] ** 2 + xs[:, 1] ** 2 < 0.5, 1.0, -1.0)
dev = qml.device(device_name(), wires=2)


@qml.qnode(dev)
def model(params, x):
    for p in params:
        qml.Rot(x[0] * p[0], x[1] * p[1], p[2], wires=0)
        qml.Rot(x[1] * p[3], x[0] * p[4], p[5], wires=1)
        qml.CZ([0, 1])
    return qml.expval(qml.Z(0) @ qml.Z(1))


def loss(params):
    return sum((model(params, x) - y) ** 2 for x, y in zip(xs, ys)) / len(ys)


params = np.array(np.random.uniform(0, np.pi, (3, 6)), requires_grad=True)
opt = qml.AdamOptimizer(0.1)
losses = []
for _ in range(5):
    params, l = opt.step_and_cost(loss, params)
    losses.append(l)
exact("losses", losses)
