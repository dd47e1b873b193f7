"""Variational classifier: angle embedding, Rot layers and a CNOT ring, square loss on a small
seeded dataset, Nesterov momentum in batches."""
import pennylane as qml
from pennylane import numpy as np

from _report import device_name, exact

np.random.seed(0)
n = 4
X = np.random.uniform(-1, 1, (16, n), requires_grad=False)
Y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
dev = qml.device(device_name(), wires=n)


@qml.qnode(dev)
def circuit(weights, x):
    qml.AngleEmbedding(x, wires=range(n))
    for layer in weights:
        for w in range(n):
            qml.Rot(*layer[w], wires=w)
        for w in range(n):
            qml.CNOT([w, (w + 1) % n])
    return qml.expval(qml.Z(0))


def cost(weights, bias, xs, ys):
    preds = [circuit(weights, x) + bias for x in xs]
    return sum((p - y) ** 2 for p, y in zip(preds, ys)) / len(ys)


weights = np.array(0.01 * np.random.randn(2, n, 3), requires_grad=True)
bias = np.array(0.0, requires_grad=True)
opt = qml.NesterovMomentumOptimizer(0.5)
losses = []
for it in range(4):
    idx = np.random.randint(0, len(X), (4,))
    (weights, bias, _, _), loss = opt.step_and_cost(cost, weights, bias, X[idx], Y[idx])
    losses.append(loss)
exact("losses", losses)
exact("accuracy", np.mean([np.sign(circuit(weights, x) + bias) == y for x, y in zip(X, Y)]))
