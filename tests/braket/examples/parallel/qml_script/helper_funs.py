"""Sonar data and the job's PennyLane device."""
import os

import numpy as np
import pennylane as qml
import torch


def sonar_dataset(ndata, input_dir):
    path = os.path.join(input_dir, "input-data", "sonar.all-data")
    rows = [line.strip().split(",") for line in open(path) if line.strip()]
    x = np.array([[float(v) for v in r[:-1]] for r in rows], dtype=np.float32)[:ndata]
    y = np.array([1.0 if r[-1] == "M" else -1.0 for r in rows], dtype=np.float32)[:ndata]
    return torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y))


def get_device(nwires, device_string):
    name = device_string.partition(":")[2].partition("/")[2]
    return qml.device(name, wires=nwires)
