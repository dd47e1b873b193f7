"""The same CCQC circuit written in PennyLane, wrapped in ``qml.qnn.TorchLayer``.

Used for the agreement tests, for ``local:pennylane/<name>`` devices in the
training job, and as the benchmark's peer. The QNode is built from
a module-level callable class so nothing in it is a
closure (PennyLane issue #2204 is about layers that cannot be pickled).
"""
from __future__ import annotations

import pennylane as qml
import torch

from qhybrid.qml import circuit


class CCQC:
    """The circuit body as a picklable callable (see :mod:`qhybrid.qml.circuit`)."""

    def __init__(self, n_wires: int, ranges=(1, 3), embedding: str = "X"):
        self.n_wires, self.ranges, self.embedding = n_wires, tuple(ranges), embedding

    def __call__(self, inputs, w_layer1, w_layer2, rotation):
        n = self.n_wires
        qml.AngleEmbedding(inputs, wires=range(n), rotation=self.embedding)
        for rng, w in zip(self.ranges, (w_layer1, w_layer2)):
            for wire in range(n):
                qml.Rot(w[0, wire, 0], w[0, wire, 1], w[0, wire, 2], wires=wire)
            for k, (control, target) in enumerate(circuit.chain_pairs(n, rng)):
                qml.CRot.compute_decomposition(w[1, k, 0], w[1, k, 1], w[1, k, 2], wires=[control, target])
        qml.Rot(rotation[0], rotation[1], rotation[2], wires=0)
        return [qml.expval(qml.PauliZ(0))]


def pennylane_layer(n_wires: int, device_name: str = "default.qubit", *, diff_method: str = "adjoint",
                    ranges=(1, 3), embedding: str = "X", dtype=torch.float64,
                    **device_options):
    """A ``TorchLayer`` of the CCQC circuit on ``qml.device(device_name, wires=n_wires)``.

    Its weights have the real ``dtype`` (TorchLayer's own default is float32).
    Only two entangling layers (``w_layer1``, ``w_layer2``), as in the Braket example.
    """
    if len(ranges) != 2:
        raise ValueError(f"ranges={ranges!r}: the PennyLane reference has exactly two layers")
    dev = qml.device(device_name, wires=n_wires, **device_options)
    body = CCQC(n_wires, ranges, embedding)
    qnode = qml.QNode(body, dev, interface="torch", diff_method=diff_method)
    shapes = {"w_layer1": (2, n_wires, 3), "w_layer2": (2, n_wires, 3), "rotation": (3,)}
    return qml.qnn.TorchLayer(qnode, shapes).to(dtype)
