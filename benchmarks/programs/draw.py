"""qml.draw and qml.specs of a QNode (no execution needed for the drawing)."""
import pennylane as qml
from pennylane import numpy as np

from _report import device_name, exact, text

dev = qml.device(device_name(), wires=3)


@qml.qnode(dev)
def circuit(w):
    qml.StronglyEntanglingLayers(w, wires=range(3))
    qml.Toffoli([0, 1, 2])
    return qml.expval(qml.Z(0)), qml.probs(wires=[1, 2])


w = np.full(qml.StronglyEntanglingLayers.shape(2, 3), 0.3)
text("drawing", qml.draw(circuit, level="top")(w))
text("decomposed", qml.draw(circuit, decimals=3, level="device")(w).replace(device_name(), "DEV"))
ev, probs = circuit(w)
exact("values", ev, probs)
