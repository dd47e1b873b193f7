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


def _ladder(swaps, n, dtype, device):
    from qhybrid.sim.bind import ladder_tables, permutation_step

    return permutation_step(swaps, ladder_tables(swaps, n), dtype=dtype, device=device)


def _ladder_map(swaps, n) -> np.ndarray:
    """``src`` with ``psi'[j] = psi[src[j]]`` after the CNOTs / SWAPs ``swaps`` in order (numpy oracle)."""
    idx = np.arange(2**n)
    bit = lambda i, w: (i >> (n - 1 - w)) & 1  # noqa: E731
    src = idx.copy()
    for (a, b), ctrl in swaps:  # one gate: psi'[j] = psi[m(j)], composed as src <- src[m]
        if ctrl:
            m = idx ^ (bit(idx, a) << (n - 1 - b))
        else:
            m = idx ^ ((bit(idx, a) ^ bit(idx, b)) * ((1 << (n - 1 - a)) | (1 << (n - 1 - b))))
        src = src[m]
    return src


@pytest.mark.parametrize("dtype", DTYPES)
def test_permutation_ladders(kernel_set, dtype, rng):
    """A short ladder and a long one (a CNOT ring and SWAPs: sets may take another path above a
    length), their inverses, and (``fused_ladders``) the gather into another buffer and a layer
    read and written through ladders, against the index map in numpy."""
    from qhybrid.sim.bind import step_for
    from qhybrid.sim.circuit import Operation

    n, dev = 5, device_for(kernel_set)
    psi = _state(n, 2, rng, dtype, dev)
    a = psi.cpu().numpy()
    short = (((3, 1), True), ((0, 4), False), ((4, 2), True))
    ring = tuple(((w, (w + 1) % n), True) for w in range(n)) + (((1, 3), False), ((2, 0), True))
    for swaps in (short, ring):
        step, src = _ladder(swaps, n, dtype, dev), _ladder_map(swaps, n)
        got = psi.clone()
        kernel_set.apply_permutation(got, step, n)
        np.testing.assert_array_equal(got.cpu().numpy(), a[:, src])
        kernel_set.apply_permutation(got, step.inverse(), n)
        np.testing.assert_array_equal(got.cpu().numpy(), a)
    if not kernel_set.fused_ladders:
        return
    out = torch.zeros_like(psi)
    kernel_set.permute_into(out, psi, step)
    np.testing.assert_array_equal(out.cpu().numpy(), a[:, src])
    rot = [Operation("RY", (w,), (float(rng.uniform(-3, 3)),)) for w in range(n)]
    layer = step_for(rot[0], n, dtype=dtype, device=dev)
    u = _on({0: layer.matrix[0].cpu().numpy()}, n)
    from qhybrid.sim.steps import Layer

    lay = Layer((0,), layer.matrix[None])
    after = _ladder(short, n, dtype, dev)
    want = ((a[:, src]) @ u.T)[:, _ladder_map(short, n)]
    src_buf, dst = psi.clone(), torch.empty_like(psi)
    res = kernel_set.apply_layer(dst, lay, n, perm=step, src=src_buf, after=after)
    assert res is src_buf or res is dst
    np.testing.assert_allclose(res.cpu().numpy(), want, atol=_tol(dtype) * 4)
    spare, mine = torch.empty_like(psi), psi.clone()
    res = kernel_set.apply_layer(mine, lay, n, after=after, spare=spare)
    assert res is spare or res is mine
    np.testing.assert_allclose(res.cpu().numpy(), (a @ u.T)[:, _ladder_map(short, n)], atol=_tol(dtype) * 4)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pauli_sum_into(kernel_set, dtype, rng):
    """``out += sum c_t P_t psi`` with complex coefficients, bit flips and none, into a nonzero ``out``."""
    n, dev = 5, device_for(kernel_set)
    psi = _state(n, 2, rng, dtype, dev)
    a = psi.cpu().numpy().astype(np.complex128)
    terms = [(0.3 - 0.7j, 0b10010, 0b00110), (1.25, 0b00001, 0), (-0.5j, 0, 0b11000), (0.8, 0b11111, 0b10101)]
    start = _state(n, 2, rng, dtype, dev)
    want = start.cpu().numpy().astype(np.complex128)
    idx = np.arange(2**n)
    for c, x, z in terms:
        sign = 1 - 2 * (np.array([bin((i ^ x) & z).count("1") for i in idx]) % 2)
        want = want + c * sign * a[:, idx ^ x]
    out = start.clone()
    kernel_set.pauli_sum_into(out, psi, terms)
    np.testing.assert_allclose(out.cpu().numpy(), want, atol=_tol(dtype) * 10)
