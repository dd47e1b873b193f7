"""Barren-plateau study: numpy's global seed, a new device per circuit size, random parameters
drawn after each device is created, the variance of one gradient entry."""
import pennylane as qml
from pennylane import numpy as np

from _report import device_name, exact

np.random.seed(42)
variances = []
for n in (2, 3, 4):
    dev = qml.device(device_name(), wires=n)  # lightning's default seed draws from the global stream

    @qml.qnode(dev)
    def circuit(params):
        for w in range(n):
            qml.RY(np.pi / 4, w)
        for w in range(n):
            [qml.RX, qml.RY, qml.RZ][np.random.randint(3)](params[w], w)
        for w in range(n - 1):
            qml.CZ([w, w + 1])
        return qml.expval(qml.Z(0) @ qml.Z(1))

    grads = []
    for _ in range(20):
        params = np.random.uniform(0, 2 * np.pi, size=n, requires_grad=True)
        grads.append(qml.grad(circuit)(params)[0])
    variances.append(np.var(grads))
exact("variances", variances)
