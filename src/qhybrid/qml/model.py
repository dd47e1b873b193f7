"""``DressedQNN``: Linear(60 -> n), (sigmoid - 1/2) 2 pi, the quantum layer, Linear(1 -> 1).

The Braket example "Parallelize training for QML" (after Mari et al.'s
dressed quantum circuits), trained with a margin ranking loss against zero
(margin 0.1), labels +1 for mines and -1 for rocks.
"""
from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from qhybrid.qml.layer import DTYPES, QuantumLayer

MARGIN = 0.1


class DressedQNN(nn.Module):
    """A classical-quantum-classical classifier of ``n_features``-vectors.

    Args:
        n_wires: wires of the quantum layer.
        n_features: input features (60 for Sonar).
        dtype: the quantum layer's complex dtype; the linear layers use its real dtype.
        device: torch device.
        qlayer: a ready quantum layer (e.g. a PennyLane ``TorchLayer`` from
            :func:`qhybrid.qml.reference.pennylane_layer`); default a
            :class:`QuantumLayer`.
        generator: ``torch.Generator`` for the quantum weights (the linear
            layers draw from torch's global generator, as ``nn.Linear`` does).
        kernel: the default quantum layer's kernel set (as :class:`QuantumLayer`).

    Example:
        >>> model = DressedQNN(4)
        >>> model(torch.rand(5, 60, dtype=torch.float64)).shape
        torch.Size([5])
    """

    def __init__(self, n_wires: int, *, n_features: int = 60, dtype: torch.dtype = torch.complex128,
                 device=None, qlayer: nn.Module | None = None, generator=None, kernel="auto"):
        super().__init__()
        real = DTYPES.get(dtype, torch.float64)
        self.input_layer = nn.Linear(n_features, n_wires, dtype=real, device=device)
        self.qlayer = qlayer if qlayer is not None else QuantumLayer(
            n_wires, dtype=dtype, device=device, generator=generator, kernel=kernel)
        self.output_layer = nn.Linear(1, 1, dtype=real, device=device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Scores ``(B,)`` for ``x`` ``(B, n_features)``; positive means mine."""
        x = x.to(self.input_layer.weight.dtype)
        x = (torch.sigmoid(self.input_layer(x)) - 0.5) * (2 * math.pi)
        x = self.qlayer(x).to(x.dtype)
        return self.output_layer(x).squeeze(-1)


def margin_loss(scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """The mean margin ranking loss of ``scores`` against zero with ``labels`` +1/-1."""
    labels = labels.to(scores.dtype)
    return F.margin_ranking_loss(scores, torch.zeros_like(scores), labels, margin=MARGIN)


def accuracy(scores: torch.Tensor, labels: torch.Tensor) -> float:
    """Fraction of samples whose score has the sign of their label."""
    return float(((scores > 0) == (labels > 0)).to(torch.float64).mean())
