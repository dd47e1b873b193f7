"""The batched torch kernels (sim/batchedtorch.py) against the reference kernels of sim/kernels.py."""
from __future__ import annotations

import pytest
import torch

from batchedhelpers import random_states, random_unitaries, reference_gate

from qhybrid.sim import batchedtorch

GATES = [(-1, 0), (-1, 2), (-1, 4), (0, 3), (3, 0), (1, 2), (4, 1), (2, 4)]


@pytest.mark.parametrize("gate", GATES)
@pytest.mark.parametrize("dtype", [torch.complex128, torch.complex64])
def test_gate_matches_reference(gate, dtype):
    n = 5
    state, u = random_states(3, n, dtype), random_unitaries(1, dtype)[0]
    got = state.clone()
    batchedtorch.run(got, u[None], [gate], n, torch.empty(got.numel(), dtype=dtype))
    tol = 1e-12 if dtype == torch.complex128 else 1e-5
    torch.testing.assert_close(got, reference_gate(state, u, *gate, n), atol=tol, rtol=0)


@pytest.mark.parametrize("gate", GATES)
def test_per_sample_matrices(gate):
    n = 4 if max(gate) < 4 else 5
    state = random_states(2, n, torch.complex128)
    us = random_unitaries(2, seed=3)
    got = state.clone()
    view, axis = batchedtorch.gate_view(got, *gate, n)
    batchedtorch.apply_2x2(view, axis, us, torch.empty(state.numel(), dtype=state.dtype))
    for b in range(2):
        torch.testing.assert_close(got[b:b + 1], reference_gate(state[b:b + 1], us[b], *gate, n), atol=1e-12, rtol=0)


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
