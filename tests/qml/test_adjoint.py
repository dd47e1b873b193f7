"""Kernels against the reference kernels of sim/kernels.py; adjoint gradients against autograd."""
from __future__ import annotations

import pytest
import torch

from qhybrid.qml import adjoint, fast
from qhybrid.sim import kernels

KERNELS = ["torch"] + (["numba"] if fast.available() else [])
GATES = [(-1, 0), (-1, 2), (-1, 4), (0, 3), (3, 0), (1, 2), (4, 1), (2, 4)]


def _random_state(batch, n, dtype, seed=0):
    gen = torch.Generator().manual_seed(seed)
    real = torch.randn((batch, 2**n, 2), generator=gen, dtype=torch.float64)
    psi = torch.complex(real[..., 0], real[..., 1]).to(dtype)
    return psi / psi.norm(dim=1, keepdim=True)


def _random_unitary(seed=1, dtype=torch.complex128):
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


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("gate", GATES)
@pytest.mark.parametrize("dtype", [torch.complex128, torch.complex64])
def test_gate_kernels_match_reference(kernel, gate, dtype):
    n, (control, target) = 5, gate
    state, u = _random_state(3, n, dtype), _random_unitary(dtype=dtype)
    expected = _reference(state, u, control, target, n)
    got = state.clone()
    if kernel == "numba":
        fast.apply(got.numpy(), u.numpy(), control, target, n)
    else:
        view, axis = adjoint.gate_view(got, control, target, n)
        adjoint.apply_2x2(view, axis, u, torch.empty(got.numel(), dtype=dtype))
    tol = 1e-12 if dtype == torch.complex128 else 1e-5
    torch.testing.assert_close(got, expected, atol=tol, rtol=0)


@pytest.mark.parametrize("gate", GATES)
def test_per_sample_matrices_in_torch_kernel(gate):
    n, (control, target) = 4 if max(gate) < 4 else 5, gate
    state = _random_state(2, n, torch.complex128)
    us = torch.stack([_random_unitary(3), _random_unitary(4)])
    view_state = state.clone()
    view, axis = adjoint.gate_view(view_state, control, target, n)
    adjoint.apply_2x2(view, axis, us, torch.empty(state.numel(), dtype=state.dtype))
    for b in range(2):
        ref = _reference(state[b:b + 1], us[b], control, target, n)
        torch.testing.assert_close(view_state[b:b + 1], ref, atol=1e-12, rtol=0)


def _circuit_inputs(batch, n, seed=5):
    gen = torch.Generator().manual_seed(seed)
    raw = torch.randn((batch, n, 2, 2), generator=gen, dtype=torch.float64)
    factors = torch.complex(raw[..., 0], raw[..., 1])
    factors = factors / factors.norm(dim=-1, keepdim=True)
    mats = torch.stack([_random_unitary(seed + k) for k in range(6)])
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
        state = _reference(state, u, control, target, n)
    psi = kernels.apply_matrix(state, obs, [0], n)
    return (state.conj() * psi).sum(1).real


@pytest.mark.parametrize("kernel", KERNELS)
def test_expval_and_adjoint_gradients_match_autograd(kernel):
    factors, mats, obs = _circuit_inputs(3, 4)
    leaves = [t.clone().requires_grad_() for t in (factors, mats, obs)]
    ref_leaves = [t.clone().requires_grad_() for t in (factors, mats, obs)]
    out = adjoint.CircuitExpval.apply(*leaves, PLAN, adjoint.Workspace(), kernel)
    ref = _naive_expval(*ref_leaves, PLAN)
    torch.testing.assert_close(out, ref, atol=1e-12, rtol=0)
    weights = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    (out * weights).sum().backward()
    (ref * weights).sum().backward()
    for got, want in zip(leaves, ref_leaves):
        torch.testing.assert_close(got.grad, want.grad, atol=1e-12, rtol=0)


def test_workspace_survives_pickling_empty():
    import pickle

    ws = adjoint.Workspace()
    ws.put(torch.zeros(8, dtype=torch.complex128))
    clone = pickle.loads(pickle.dumps(ws))
    assert clone._free == {}


@pytest.mark.skipif(not fast.available(), reason="numba not installed")
@pytest.mark.parametrize("by_sample", [True, False])
def test_numba_sample_and_gate_orders_agree(monkeypatch, by_sample):
    monkeypatch.setattr(fast, "by_sample", lambda batch: by_sample)
    factors, mats, obs = _circuit_inputs(3, 4, seed=9)
    leaves = [t.clone().requires_grad_() for t in (factors, mats, obs)]
    ref_leaves = [t.clone().requires_grad_() for t in (factors, mats, obs)]
    out = adjoint.CircuitExpval.apply(*leaves, PLAN, adjoint.Workspace(), "numba")
    ref = adjoint.CircuitExpval.apply(*ref_leaves, PLAN, adjoint.Workspace(), "torch")
    torch.testing.assert_close(out, ref, atol=1e-12, rtol=0)
    out.sum().backward()
    ref.sum().backward()
    for got, want in zip(leaves, ref_leaves):
        torch.testing.assert_close(got.grad, want.grad, atol=1e-12, rtol=0)
