"""A dressed quantum classifier: linear in, a PennyLane TorchLayer, linear out."""
import math

import pennylane as qml
import torch
from torch import nn


class DressedQNN(nn.Module):
    def __init__(self, qc_dev, n_features=60, n_layers=1):
        super().__init__()
        nwires = len(qc_dev.wires)

        @qml.qnode(qc_dev, interface="torch", diff_method="adjoint")
        def circuit(inputs, weights):
            qml.AngleEmbedding(inputs, wires=range(nwires))
            qml.BasicEntanglerLayers(weights, wires=range(nwires))
            return [qml.expval(qml.PauliZ(w)) for w in range(nwires)]

        self.pre = nn.Linear(n_features, nwires)
        self.q = qml.qnn.TorchLayer(circuit, {"weights": (n_layers, nwires)})
        self.post = nn.Linear(nwires, 1)

    def forward(self, x):
        x = torch.tanh(self.pre(x)) * math.pi / 2
        return self.post(self.q(x).to(x.dtype)).squeeze(-1)
