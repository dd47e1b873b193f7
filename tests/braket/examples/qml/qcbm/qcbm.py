"""A small quantum circuit Born machine: probabilities of a layered circuit and an MMD loss."""
import numpy as np
import pennylane as qml
from pennylane import numpy as pnp


def mmd_loss(px, py, sigma=0.5):
    """Maximum mean discrepancy of two distributions over bitstrings, Gaussian kernel on their index."""
    n = len(py)
    idx = np.arange(n)
    kernel = np.exp(-((idx[:, None] - idx[None, :]) ** 2) / (2 * sigma))
    diff = px - py
    return diff @ kernel @ diff


class QCBM:
    """Layers of RX-RZ-RX rotations and a CNOT ring on ``n_qubits``; ``3 * n_layers * n_qubits`` parameters."""

    def __init__(self, device, n_qubits, n_layers, data):
        self.n_qubits, self.n_layers, self.data = n_qubits, n_layers, np.asarray(data)

        @qml.qnode(device)
        def probs(params):
            params = params.reshape(n_layers, n_qubits, 3)
            for layer in range(n_layers):
                for q in range(n_qubits):
                    qml.RX(params[layer, q, 0], wires=q)
                    qml.RZ(params[layer, q, 1], wires=q)
                    qml.RX(params[layer, q, 2], wires=q)
                for q in range(n_qubits):
                    qml.CNOT(wires=[q, (q + 1) % n_qubits])
            return qml.probs(wires=range(n_qubits))

        self._probs = probs

    def probabilities(self, params):
        return np.asarray(self._probs(pnp.array(params, requires_grad=False)))

    def gradient(self, params):
        data = pnp.array(self.data, requires_grad=False)
        grad = qml.grad(lambda p: mmd_loss(self._probs(p), data))
        return np.asarray(grad(pnp.array(params, requires_grad=True)))
