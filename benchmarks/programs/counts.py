"""Shots: qml.counts of a GHZ-like state, and expectation values with 4,000 shots."""
import pennylane as qml
from pennylane import numpy as np

from _report import device_name, exact, sampled

np.random.seed(5)
dev = qml.device(device_name(), wires=4)
shots = 4000


@qml.set_shots(shots)
@qml.qnode(dev)
def counts(theta):
    qml.RY(theta, 0)
    for w in range(3):
        qml.CNOT([w, w + 1])
    return qml.counts()


@qml.set_shots(shots)
@qml.qnode(dev)
def expvals(theta):
    qml.RY(theta, 0)
    qml.CNOT([0, 1])
    qml.RX(0.3, 2)
    return qml.expval(qml.Z(0) @ qml.Z(1)), qml.expval(qml.Z(1)), qml.expval(qml.Y(2))


c = counts(1.1)
exact("outcomes", len(c))  # only 0000 and 1111 can occur
p = c.get("1111", 0) / shots
sampled("p1111", p, np.sqrt(max(p * (1 - p), 1e-3) / shots))
for label, v in zip(("zz", "z1", "y2"), expvals(1.1)):
    sampled(label, v, np.sqrt(max(1 - float(v) ** 2, 1e-3) / shots))
