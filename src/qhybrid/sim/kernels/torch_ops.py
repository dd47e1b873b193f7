"""Reference gate kernels on batched state vectors.

A state is a tensor of shape ``(B, 2**n)``; wire 0 is the most significant
bit (PennyLane's convention). These kernels trust their inputs: wires are
distinct and inside ``range(n)``, matrices are square of size ``2**len(wires)``
and share the state's dtype and device. Validation happens at the boundary
(the device's preprocess, the layer's constructor).

The functions here are the plain reference versions every fast path is
checked against; faster kernels may replace their bodies but keep their
signatures and results.
"""
from __future__ import annotations

import torch


def apply_matrix(state: torch.Tensor, matrix: torch.Tensor, wires, n_wires: int) -> torch.Tensor:
    """Apply a ``2**k x 2**k`` matrix (or a batch ``(B, 2**k, 2**k)``) to ``wires``.

    Args:
        state: ``(B, 2**n)`` amplitudes.
        matrix: ``(2**k, 2**k)``, or ``(B, 2**k, 2**k)`` for one matrix per batch entry.
        wires: the k target wires, in the matrix's bit order (first wire = most significant).
        n_wires: n.

    Returns:
        A new ``(B, 2**n)`` tensor.
    """
    batch = state.shape[0]
    k = len(wires)
    psi = state.reshape((batch,) + (2,) * n_wires)
    axes = [1 + w for w in wires]
    front = list(range(1, k + 1))
    psi = torch.movedim(psi, axes, front)
    moved_shape = psi.shape
    psi = psi.reshape(batch, 2**k, -1)
    out = torch.matmul(matrix, psi)
    out = torch.movedim(out.reshape(moved_shape), front, axes)
    return out.reshape(batch, -1)


def apply_diagonal(state: torch.Tensor, diagonal: torch.Tensor, wires, n_wires: int) -> torch.Tensor:
    """Multiply by a diagonal ``(2**k,)`` (or ``(B, 2**k)``) acting on ``wires``.

    Returns:
        A new ``(B, 2**n)`` tensor.
    """
    batch = state.shape[0]
    k = len(wires)
    diag = diagonal.reshape((-1,) + (2,) * k)
    # bring the diagonal's axes to the state's positions of `wires`
    order = sorted(range(k), key=lambda i: wires[i])
    diag = diag.permute([0] + [1 + i for i in order])
    shape = [diag.shape[0]] + [1] * n_wires
    for w in wires:
        shape[1 + w] = 2
    psi = state.reshape((batch,) + (2,) * n_wires)
    return (psi * diag.reshape(shape)).reshape(batch, -1)
