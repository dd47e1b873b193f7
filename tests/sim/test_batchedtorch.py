"""The batched torch kernels (sim/batchedtorch.py) against the reference kernels of sim/kernels.py."""
from __future__ import annotations

import pytest
import torch

from qhybrid.sim import batchedtorch, kernels

GATES = [(-1, 0), (-1, 2), (-1, 4), (0, 3), (3, 0), (1, 2), (4, 1), (2, 4)]


def _state(batch, n, dtype, seed=0):
    gen = torch.Generator().manual_seed(seed)
    real = torch.randn((batch, 2**n, 2), generator=gen, dtype=torch.float64)
    psi = torch.complex(real[..., 0], real[..., 1]).to(dtype)
    return psi / psi.norm(dim=1, keepdim=True)


def _unitary(seed=1, dtype=torch.complex128):
    gen = torch.Generator().manual_seed(seed)
    a = torch.randn((2, 2, 2), generator=gen, dtype=torch.float64)
    q, _ = torch.linalg.qr(torch.complex(a[..., 0], a[..., 1]))
    return q.to(dtype)


def _reference(state, u, control, target, n):
    if control < 0:
        return kernels.apply_matrix(state, u, [target], n)
    cu = torch.eye(4, dtype=u.dtype)
    cu[2:, 2:] = u
    return kernels.apply_matrix(state, cu, [control, target], n)


@pytest.mark.parametrize("gate", GATES)
@pytest.mark.parametrize("dtype", [torch.complex128, torch.complex64])
def test_gate_matches_reference(gate, dtype):
    n = 5
    state, u = _state(3, n, dtype), _unitary(dtype=dtype)
    got = state.clone()
    batchedtorch.run(got, u[None], [gate], n, torch.empty(got.numel(), dtype=dtype))
    tol = 1e-12 if dtype == torch.complex128 else 1e-5
    torch.testing.assert_close(got, _reference(state, u, *gate, n), atol=tol, rtol=0)


@pytest.mark.parametrize("gate", GATES)
def test_per_sample_matrices(gate):
    n = 4 if max(gate) < 4 else 5
    state = _state(2, n, torch.complex128)
    us = torch.stack([_unitary(3), _unitary(4)])
    got = state.clone()
    view, axis = batchedtorch.gate_view(got, *gate, n)
    batchedtorch.apply_2x2(view, axis, us, torch.empty(state.numel(), dtype=state.dtype))
    for b in range(2):
        torch.testing.assert_close(got[b:b + 1], _reference(state[b:b + 1], us[b], *gate, n), atol=1e-12, rtol=0)


def test_product_state_is_the_kron_of_the_factors():
    gen = torch.Generator().manual_seed(2)
    factors = torch.randn((2, 4, 2), generator=gen, dtype=torch.float64).to(torch.complex128)
    out = batchedtorch.product_state(factors, torch.empty(2 * 16, dtype=torch.complex128),
                                     torch.empty(2 * 16, dtype=torch.complex128))
    for b in range(2):
        want = factors[b, 0]
        for i in range(1, 4):
            want = torch.kron(want, factors[b, i])
        torch.testing.assert_close(out[b], want, atol=1e-14, rtol=0)
