"""A hybrid torch model: Linear -> qml.qnn.TorchLayer (4 wires) -> Linear, Adam, float64."""
import pennylane as qml
import torch

from _report import device_name, exact

torch.manual_seed(3)
torch.set_default_dtype(torch.float64)
n = 4
dev = qml.device(device_name(), wires=n)


@qml.qnode(dev, interface="torch")
def qnode(inputs, weights):
    qml.AngleEmbedding(inputs, wires=range(n))
    qml.BasicEntanglerLayers(weights, wires=range(n))
    return [qml.expval(qml.Z(w)) for w in range(n)]


model = torch.nn.Sequential(torch.nn.Linear(3, n), qml.qnn.TorchLayer(qnode, {"weights": (2, n)}),
                            torch.nn.Linear(n, 1))
X = torch.rand(16, 3)
Y = (X.sum(1, keepdim=True) > 1.5).double()
opt = torch.optim.Adam(model.parameters(), lr=0.05)
losses = []
for _ in range(5):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(X), Y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
exact("losses", losses)
