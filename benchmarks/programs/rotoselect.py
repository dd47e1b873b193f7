"""Rotoselect-style updates: per parameter, the best of RX / RY / RZ and its optimal angle from
three cost evaluations (the closed-form sinusoid minimum)."""
import pennylane as qml
from pennylane import numpy as np

from _report import device_name, exact

dev = qml.device(device_name(), wires=2)
GATES = {"X": qml.RX, "Y": qml.RY, "Z": qml.RZ}


@qml.qnode(dev)
def circuit(params, generators):
    GATES[generators[0]](params[0], wires=0)
    GATES[generators[1]](params[1], wires=1)
    qml.CNOT([0, 1])
    return qml.expval(0.5 * qml.Z(0) + 0.8 * qml.Y(1))


def best_angle(params, generators, d):
    def at(t):
        p = params.copy()
        p[d] = t
        return circuit(p, generators)

    m0, mp, mm = at(0.0), at(np.pi / 2), at(-np.pi / 2)
    t = -np.pi / 2 - np.arctan2(2 * m0 - mp - mm, mp - mm)
    t = (t + np.pi) % (2 * np.pi) - np.pi
    return t, at(t)


params = np.array([0.3, 0.25])
generators = ["X", "Y"]
costs = []
for _ in range(3):
    for d in range(2):
        best = None
        for g in "XYZ":
            trial = list(generators)
            trial[d] = g
            t, c = best_angle(params, trial, d)
            if best is None or c < best[0] - 1e-12:
                best = (c, g, t)
        generators[d] = best[1]
        params[d] = best[2]
    costs.append(circuit(params, generators))
exact("costs", costs)
exact("params", params)
print("text generators", "".join(generators))
