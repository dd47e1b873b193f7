"""Every kernel set against the reference kernels of sim/kernels/torch_ops.py; adjoint gradients against autograd."""
from __future__ import annotations

import pytest
import torch
from kernelsets import KERNEL_SETS

from batchedhelpers import random_unitaries, reference_gate

from qhybrid.qml import adjoint
from qhybrid.sim.kernels import torch_ops as kernels
from qhybrid.sim.cache import Cache

KERNELS = KERNEL_SETS  # every registered kernel set (tests/kernelsets.py)


def _circuit_inputs(batch, n, seed=5):
    gen = torch.Generator().manual_seed(seed)
    raw = torch.randn((batch, n, 2, 2), generator=gen, dtype=torch.float64)
    factors = torch.complex(raw[..., 0], raw[..., 1])
    factors = factors / factors.norm(dim=-1, keepdim=True)
    mats = random_unitaries(6, seed=seed)
    h = torch.randn((2, 2, 2), generator=gen, dtype=torch.float64)
    obs = torch.complex(h[..., 0], h[..., 1])
    return factors, mats, obs + obs.conj().T


PLAN = adjoint.Plan(4, ((0, 3), (-1, 1), (3, 1), (2, 0), (-1, 3), (1, 2)))


def _naive_expval(factors, mats, obs, plan):
    """Dense reference: build the product state by kron, apply the reference kernels."""
    n = plan.n_wires
    rows = []
    for f in factors:
        psi = f[0]
        for i in range(1, n):
            psi = torch.kron(psi, f[i])
        rows.append(psi)
    state = torch.stack(rows)
    for (control, target), u in zip(plan.gates, mats):
        state = reference_gate(state, u, control, target, n)
    psi = kernels.apply_matrix(state, obs, [0], n)
    return (state.conj() * psi).sum(1).real


@pytest.mark.parametrize("kernel", KERNELS)
def test_expval_and_adjoint_gradients_match_autograd(kernel):
    factors, mats, obs = _circuit_inputs(3, 4)
    leaves = [t.clone().requires_grad_() for t in (factors, mats, obs)]
    ref_leaves = [t.clone().requires_grad_() for t in (factors, mats, obs)]
    out = adjoint.CircuitExpval.apply(*leaves, PLAN, Cache(), kernel)
    ref = _naive_expval(*ref_leaves, PLAN)
    torch.testing.assert_close(out, ref, atol=1e-12, rtol=0)
    weights = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    (out * weights).sum().backward()
    (ref * weights).sum().backward()
    for got, want in zip(leaves, ref_leaves):
        torch.testing.assert_close(got.grad, want.grad, atol=1e-12, rtol=0)


@pytest.mark.parametrize("kernel", KERNELS)
def test_buffers_kept_between_calls_and_held_until_backward(kernel):
    factors, mats, obs = _circuit_inputs(3, 4)
    cache = Cache()
    leaves = [t.clone().requires_grad_() for t in (factors, mats, obs)]
    first = adjoint.CircuitExpval.apply(*leaves, PLAN, cache, kernel)
    second = adjoint.CircuitExpval.apply(*leaves, PLAN, cache, kernel)  # psi of the first is held
    (first.sum() + 2 * second.sum()).backward()
    ref = [t.clone().requires_grad_() for t in (factors, mats, obs)]
    (3 * adjoint.CircuitExpval.apply(*ref, PLAN, None, kernel).sum()).backward()
    for got, want in zip(leaves, ref):
        torch.testing.assert_close(got.grad, want.grad, atol=1e-12, rtol=0)
    assert cache._bytes > 0


def test_memory_is_checked_and_kept_buffers_count_as_free(monkeypatch):
    from qhybrid.errors import MemoryLimitError

    factors, mats, obs = _circuit_inputs(3, 4)
    cache = Cache()
    leaves = [t.clone().requires_grad_() for t in (factors, mats, obs)]
    adjoint.CircuitExpval.apply(*leaves, PLAN, cache, "torch").sum().backward()  # keeps psi, lam, scratch
    assert cache.nbytes == 3 * 3 * 16 * 16  # three states of 3 x 16 complex128 amplitudes
    monkeypatch.setattr(adjoint, "available_bytes", lambda device: 0)
    assert adjoint.plan_chunk(3, 4, factors, "torch", cache, grad=False) == 3  # all it needs is held
    adjoint.CircuitExpval.apply(factors, mats, obs, PLAN, cache, "torch")
    with pytest.raises(MemoryLimitError, match=r"4 wires \(complex128\) need 0.5 KiB per sample"):
        adjoint.CircuitExpval.apply(factors, mats, obs, PLAN, Cache(), "torch")


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("chunk", [1, 2])
def test_chunked_call_equals_the_unchunked_one(kernel, chunk):
    """A forced tiny chunk: same outputs and gradients (complex128 to 1e-12); one chunk's buffers kept."""
    factors, mats, obs = _circuit_inputs(5, 4, seed=9)
    weights = torch.tensor([0.5, -1.0, 2.0, 0.25, -3.0], dtype=torch.float64)
    results = []
    for size in (None, chunk):
        cache = Cache()
        leaves = [t.clone().requires_grad_() for t in (factors, mats, obs)]
        out = adjoint.CircuitExpval.apply(*leaves, PLAN, cache, kernel, size)
        (out * weights).sum().backward()
        results.append((out.detach(), *(t.grad for t in leaves), cache.nbytes))
    for got, want in zip(results[1][:4], results[0][:4]):
        torch.testing.assert_close(got, want, atol=1e-12, rtol=0)
    per_sample = adjoint.STATES_PER_SAMPLE[kernel, True] if kernel == "numba" else 3
    assert results[1][4] == per_sample * chunk * 16 * 16  # buffers of one chunk, not of the batch
    with torch.no_grad():
        torch.testing.assert_close(adjoint.CircuitExpval.apply(factors, mats, obs, PLAN, None, kernel, chunk),
                                   results[0][0], atol=1e-12, rtol=0)


def test_chunk_rule():
    from qhybrid.errors import MemoryLimitError
    from qhybrid.sim.memory import chunk_size

    gib = 1 << 30
    # 26 wires, complex128, two states a sample: 2 GiB each; the 4 GiB budget takes 2 of a batch of 16
    assert chunk_size(26, batch=16, available=20 * gib) == 2
    assert chunk_size(26, batch=16, available=20 * gib, max_samples=1) == 1
    assert chunk_size(26, batch=16, dtype="complex64", available=20 * gib) == 4
    assert chunk_size(10, batch=52, available=20 * gib) == 52
    assert chunk_size(26, batch=16, available=3 * gib) == 1  # 80 % of 3 GiB
    assert chunk_size(26, batch=16, available=6 * gib, share=0.5) == 1
    with pytest.raises(MemoryLimitError, match=r"^26 wires \(complex128\) need 2.00 GiB per sample .* 1.50 GiB is free"):
        chunk_size(26, batch=16, available=3 * gib, share=0.5)
