"""Shared by the batched-circuit tests (tests/sim/test_batched*.py, tests/qml/): random states and
2x2 unitaries, and a (controlled) 2x2 gate through the reference kernels of sim/kernels.py."""
from __future__ import annotations

import torch

from qhybrid.sim.kernels import torch_ops as kernels


def random_states(batch, n, dtype, seed=0):
    """``batch`` normalised random states of ``n`` wires."""
    gen = torch.Generator().manual_seed(seed)
    real = torch.randn((batch, 2**n, 2), generator=gen, dtype=torch.float64)
    psi = torch.complex(real[..., 0], real[..., 1])
    return (psi / psi.norm(dim=1, keepdim=True)).to(dtype)


def random_unitaries(count, dtype=torch.complex128, seed=1):
    """``(count, 2, 2)`` random unitaries."""
    gen = torch.Generator().manual_seed(seed)
    a = torch.randn((count, 2, 2, 2), generator=gen, dtype=torch.float64)
    q, _ = torch.linalg.qr(torch.complex(a[..., 0], a[..., 1]))
    return q.to(dtype)


def reference_gate(state, u, control, target, n):
    """``u`` on ``target`` (on the control = 1 half when ``control >= 0``), by the reference kernels."""
    if control < 0:
        return kernels.apply_matrix(state, u, [target], n)
    cu = torch.eye(4, dtype=u.dtype)
    cu[2:, 2:] = u
    return kernels.apply_matrix(state, cu, [control, target], n)
