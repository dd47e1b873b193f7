"""The kernel-set interface (``qhybrid.sim.kernels``): the registry, and the methods the step,
observable and QAOA / QML tests do not reach, on every set against dense numpy oracles."""
from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

from kernelsets import TOL, device_for
from qhybrid.sim.kernels import (KernelSet, as_kernel_set, default_kernel_set, get_kernel_set, kernel_set_names,
                                 register_kernel_set)

DTYPES = [pytest.param(torch.complex128, id="c128"), pytest.param(torch.complex64, id="c64")]
H = np.array([[1, 1], [1, -1]], dtype=complex)


def _state(n, b, rng, dtype, device="cpu"):
    s = rng.normal(size=(b, 2**n)) + 1j * rng.normal(size=(b, 2**n))
    return torch.tensor(s / np.linalg.norm(s, axis=1, keepdims=True)).to(dtype=dtype, device=device)


def _on(wire_mats: dict, n: int) -> np.ndarray:
    """The dense ``2**n`` matrix of 2x2 matrices on some wires (wire 0 most significant)."""
    out = np.eye(1, dtype=complex)
    for w in range(n):
        out = np.kron(out, wire_mats.get(w, np.eye(2)))
    return out


def _tol(dtype) -> float:
    return TOL[str(dtype).replace("torch.", "")]


def test_registry_names_and_errors():
    assert {"numba", "torch", "triton"} <= set(kernel_set_names())
    with pytest.raises(KeyError, match="registered: numba"):
        get_kernel_set("cuquantum")
    with pytest.raises(ValueError, match="already registered"):
        register_kernel_set("torch", "elsewhere:Kernels")
    ks = get_kernel_set("torch")
    assert get_kernel_set("torch") is ks and isinstance(ks, KernelSet)
    assert pickle.loads(pickle.dumps(ks)) is ks  # by name: the process's instance
    assert default_kernel_set("cuda") is ks  # no CPU-only set for CUDA tensors
    assert as_kernel_set("numba", "cuda") is ks and as_kernel_set(None, "cpu") is default_kernel_set("cpu")


@pytest.mark.parametrize("dtype", DTYPES)
def test_walsh_hadamard_and_swaps(kernel_set, dtype, rng):
    n, dev = 5, device_for(kernel_set)
    psi = _state(n, 2, rng, dtype, dev)
    want = psi.cpu().numpy() @ _on({1: H, 3: H, 4: H}, n).T
    got = psi.clone()
    kernel_set.walsh_hadamard(got, (1, 3, 4), n)
    np.testing.assert_allclose(got.cpu().numpy(), want, atol=_tol(dtype) * 8)
    idx = np.arange(2**n)  # CNOT(3 -> 0) and SWAP(1, 4) as index maps
    bit = lambda i, w: (i >> (n - 1 - w)) & 1  # noqa: E731
    flip = idx ^ (bit(idx, 3) << (n - 1))
    sw = idx ^ ((bit(idx, 1) ^ bit(idx, 4)) * ((1 << (n - 2)) | 1))
    got = psi.clone()
    kernel_set.apply_swap(got, (3, 0), True, n)
    np.testing.assert_allclose(got.cpu().numpy(), psi.cpu().numpy()[:, flip], atol=0)
    got = psi.clone()
    kernel_set.apply_swap(got, (1, 4), False, n)
    np.testing.assert_allclose(got.cpu().numpy(), psi.cpu().numpy()[:, sw], atol=0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions(kernel_set, dtype, rng):
    n, dev = 5, device_for(kernel_set)
    psi, bra = _state(n, 3, rng, dtype, dev), _state(n, 3, rng, dtype, dev)
    a, b = psi.cpu().numpy().astype(np.complex128), bra.cpu().numpy().astype(np.complex128)
    w = torch.tensor(rng.normal(size=2**n), device=dev)
    got = kernel_set.weighted_norm(psi, w)
    assert got.dtype == torch.float64 and got.device.type == "cpu"
    np.testing.assert_allclose(got.numpy(), (np.abs(a) ** 2) @ w.cpu().numpy(), atol=_tol(dtype) * 10)
    np.testing.assert_allclose(kernel_set.vdot_real(psi, bra).numpy(), np.sum(a.conj() * b, 1).real,
                               atol=_tol(dtype) * 10)
    x, z = 0b10010, 0b00110  # X on wires 0 and 3, Z on wires 2 and 3
    idx = np.arange(2**n)
    sign = 1 - 2 * (np.array([bin(i & z).count("1") for i in idx]) % 2)
    pa = np.zeros_like(a)
    pa[:, idx ^ x] = a * sign  # P|c> = (-1)^{|c & z|} |c ^ x>
    np.testing.assert_allclose(kernel_set.pauli_expval(psi, x, z).numpy(), np.sum(a.conj() * pa, 1),
                               atol=_tol(dtype) * 10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_qaoa_cost_phase_and_mixer(kernel_set, dtype, rng):
    n, dev = 4, device_for(kernel_set)
    psi = _state(n, 2, rng, dtype, dev)
    cost = torch.tensor(rng.integers(-3, 4, size=2**n).astype(np.float64), device=dev)
    got = psi.clone()
    kernel_set.qaoa_cost_phase(got, cost, 0.7)
    want = psi.cpu().numpy() * np.exp(-0.7j * cost.cpu().numpy())
    np.testing.assert_allclose(got.cpu().numpy(), want, atol=_tol(dtype))
    beta = 0.45
    rx = np.array([[np.cos(beta), -1j * np.sin(beta)], [-1j * np.sin(beta), np.cos(beta)]])
    got = psi.clone()
    kernel_set.qaoa_mixer(got, beta, n)
    want = psi.cpu().numpy() @ _on({w: rx for w in range(n)}, n).T
    np.testing.assert_allclose(got.cpu().numpy(), want, atol=_tol(dtype) * 4)
