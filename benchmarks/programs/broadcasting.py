"""Parameter broadcasting: one QNode call over a batch of 16 angles, its values and Jacobian."""
import pennylane as qml
from pennylane import numpy as np

from _report import device_name, exact

dev = qml.device(device_name(), wires=3)


@qml.qnode(dev)
def circuit(x, w):
    qml.RX(x, 0)
    qml.RY(w[0], 1)
    qml.CNOT([0, 1])
    qml.CRZ(w[1], [1, 2])
    qml.RY(x, 2)
    return qml.expval(qml.Z(0) @ qml.Z(2)), qml.expval(qml.X(1))


x = np.linspace(0, 2 * np.pi, 16, requires_grad=True)
w = np.array([0.4, 1.3], requires_grad=False)
exact("values", circuit(x, w))
exact("jacobian", qml.jacobian(lambda x: qml.math.stack(circuit(x, w)))(x))
