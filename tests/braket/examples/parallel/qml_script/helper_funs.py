"""Sonar data, the job's PennyLane device, its hyperparameters and one epoch of training."""
import json
import os

import numpy as np
import pennylane as qml
import torch
import torch.nn.functional as F


def sonar_dataset(ndata, input_dir):
    path = os.path.join(input_dir, "input-data", "sonar.all-data")
    rows = [line.strip().split(",") for line in open(path) if line.strip()]
    x = np.array([[float(v) for v in r[:-1]] for r in rows], dtype=np.float32)[:ndata]
    y = np.array([1.0 if r[-1] == "M" else -1.0 for r in rows], dtype=np.float32)[:ndata]
    return torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y))


def get_device(nwires, device_string):
    name = device_string.partition(":")[2].partition("/")[2]
    return qml.device(name, wires=nwires)


def seeded_hyperparameters():
    """The job's hyperparameters (strings, as Braket writes them), torch and numpy seeded."""
    with open(os.environ["AMZN_BRAKET_HP_FILE"]) as f:
        hp = json.load(f)
    torch.manual_seed(int(hp["seed"]))
    np.random.seed(int(hp["seed"]))
    return hp


def train_epoch(model, loader, optimizer):
    """One pass over ``loader`` (margin ranking loss); returns the last batch's loss."""
    for data, target in loader:
        optimizer.zero_grad()
        output = model(data)
        loss = F.margin_ranking_loss(output, torch.zeros_like(output), target, margin=0.1)
        loss.backward()
        optimizer.step()
    return loss
