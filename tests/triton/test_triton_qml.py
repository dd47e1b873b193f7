"""The QML layer on the Triton kernel set (interpreter): product state, forward runs with controls,
the adjoint sweep and the factor gradients against the torch reference set, and the whole
layer (loss and every gradient) against the torch set and the PennyLane reference; complex128
to 1e-10, complex64 to 1e-5, every buffer a kernel writes inside guard bands."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

TOL = {torch.complex128: 1e-10, torch.complex64: 1e-5}
DTYPES = [pytest.param(torch.complex128, id="c128"),
          pytest.param(torch.complex64, id="c64", marks=pytest.mark.slow)]  # the interpreter: ~10 s a case


@pytest.fixture(scope="module")
def sets(triton_ops):
    from qhybrid.sim.kernels import get_kernel_set
    from qhybrid.sim.kernels.torch_set import TorchKernels

    tri = get_kernel_set("triton")
    small = type(tri)(tiles=triton_ops.Tiles(pass_bits=3, tile=16))  # several runs, rows and programs
    return small, TorchKernels()


def _same(a, b, dtype, scale=1.0):
    diff = float((a.to(torch.complex128) - b.to(torch.complex128)).abs().max())
    assert diff <= TOL[dtype] * scale, diff


def _unitaries(rng, count, dtype):
    out = []
    for _ in range(count):
        q, r = np.linalg.qr(rng.normal(size=(2, 2)) + 1j * rng.normal(size=(2, 2)))
        out.append(q * (np.diag(r) / np.abs(np.diag(r))))
    return torch.tensor(np.array(out)).to(dtype)


def _factors(rng, b, n, dtype):
    f = rng.normal(size=(b, n, 2)) + 1j * rng.normal(size=(b, n, 2))
    f[0, 1, 1] = 0.0  # a zero component (RZ embedding): no division anywhere
    return torch.tensor(f / np.linalg.norm(f, axis=2, keepdims=True)).to(dtype)


def _plan(n):
    """The classifier's gates (a chain with controls, rotations, a chain of range 2 that revisits
    wires when n is even)."""
    from qhybrid.qml.circuit import chain_pairs

    gates = list(chain_pairs(n, 1)) + [(-1, w) for w in range(n)] + list(chain_pairs(n, 2))
    return SimpleNamespace(gates=tuple(gates), n_wires=n)


@pytest.mark.parametrize("dtype", DTYPES)
def test_qml_kernels_match_torch_set(sets, guarded, dtype, rng):
    """Product state, forward, sweep (psi, lambda, the gate sums) and factor gradients, 5 wires."""
    tri, ref = sets
    n, b = 5, 2
    plan = _plan(n)
    mats = _unitaries(rng, len(plan.gates), dtype)
    factors = _factors(rng, b, n, dtype)
    got = guarded(torch.zeros(b << n, dtype=dtype))
    psi = tri.qml_product_state(factors, got.t, None)
    want = ref.qml_product_state(factors, torch.empty(b << n, dtype=dtype), torch.empty(b << n, dtype=dtype))
    _same(psi, want, dtype)
    scratch = torch.empty(b << n, dtype=dtype)
    tri.qml_forward(psi, mats, plan, None)
    ref.qml_forward(want, mats, plan, scratch)
    _same(psi, want, dtype)
    lam0 = torch.tensor(rng.normal(size=(b, 2**n)) + 1j * rng.normal(size=(b, 2**n))).to(dtype)
    lam, lam_ref = guarded(lam0), lam0.clone()
    jm = tri.qml_sweep(psi, lam.t, mats, plan, None)
    jm_ref = ref.qml_sweep(want, lam_ref, mats, plan, scratch)
    assert jm.shape == jm_ref.shape and jm.dtype == mats.dtype
    _same(jm, jm_ref, dtype, scale=2**n)
    _same(lam.t, lam_ref, dtype, scale=8)
    _same(psi, factors_state(factors), dtype, scale=8)  # psi uncomputed back to the product state
    jf = tri.qml_factor_gradients(lam.t, factors)
    _same(jf, ref.qml_factor_gradients(lam_ref.clone(), factors), dtype, scale=2**n)


def factors_state(factors):
    from qhybrid.sim import batchedtorch

    b, n, _ = factors.shape
    return batchedtorch.product_state(factors, torch.empty(b << n, dtype=factors.dtype),
                                      torch.empty(b << n, dtype=factors.dtype))


def test_qml_per_sample_matrices(sets, guarded, rng):
    """One matrix per sample and gate (``(G, B, 2, 2)``) forward and back, complex128, 4 wires."""
    tri, ref = sets
    n, b, dtype = 4, 2, torch.complex128
    plan = _plan(n)
    mats = _unitaries(rng, len(plan.gates) * b, dtype).reshape(len(plan.gates), b, 2, 2)
    factors = _factors(rng, b, n, dtype)
    psi = guarded(factors_state(factors))
    tri.qml_forward(psi.t, mats, plan, None)
    lam = guarded(psi.t.clone())
    jm = tri.qml_sweep(psi.t, lam.t, mats, plan, None)
    for s in range(b):  # the reference takes shared matrices: one sample at a time
        one = factors_state(factors[s:s + 1])
        ref.qml_forward(one, mats[:, s], plan, torch.empty(2**n, dtype=dtype))
        lam_ref = factors_state(factors[s:s + 1])
        ref.qml_forward(lam_ref, mats[:, s], plan, torch.empty(2**n, dtype=dtype))
        want = ref.qml_sweep(one, lam_ref, mats[:, s], plan, torch.empty(2**n, dtype=dtype))
        _same(jm[s], want[0], dtype, scale=2**n)


@pytest.mark.parametrize("dtype", DTYPES)
def test_qml_layer_on_triton_matches_torch_and_pennylane(sets, dtype):
    """The classifier (4 wires, ranges (1, 3), chunks of 2 samples): outputs and every parameter's
    gradient on the Triton set against the torch set, and outputs against PennyLane."""
    from qhybrid.qml.layer import QuantumLayer

    tri, _ = sets
    n, b = 4, 3
    x = torch.rand((b, n), generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    results = []
    for kernel in (tri, "torch"):
        layer = QuantumLayer(n, dtype=dtype, kernel=kernel, generator=torch.Generator().manual_seed(7),
                             max_batch_states=2)
        out = layer(x)
        (out ** 2).sum().backward()
        results.append((out.detach(), [p.grad.clone() for p in layer.parameters()], layer))
    (o1, g1, layer), (o2, g2, _) = results
    _same(o1, o2, dtype)
    for a, c in zip(g1, g2):
        _same(a, c, dtype, scale=10)
    from qhybrid.qml.reference import pennylane_layer

    ref = pennylane_layer(n, ranges=layer.ranges, embedding=layer.embedding)
    ref.load_state_dict({k: v.detach().to(torch.float64) for k, v in layer.state_dict().items()})
    with torch.no_grad():
        want = ref(x).reshape(-1)
    _same(o1[:, 0].to(torch.complex128), want.to(torch.complex128), dtype, scale=10)


def test_26_wire_classifier_fits_a_16_gib_gpu_on_the_triton_set(triton_ops):
    """The classifier's training chunk on the Triton set (4 states a sample, ``sim.memory``) at 26
    wires: one sample in complex128 (4 GiB), two in complex64, on a GPU with 16 GiB free; the
    torch set's 5 states fit too but take a sample fewer where the budget is the limit."""
    from qhybrid.qml.adjoint import states_per_sample
    from qhybrid.sim.kernels import get_kernel_set
    from qhybrid.sim.memory import chunk_size

    gib = 2**30
    tri = states_per_sample(get_kernel_set("triton"), True)
    assert tri == 4 and states_per_sample(get_kernel_set("triton"), False) == 3
    assert chunk_size(26, batch=32, states_per_sample=tri, available=16 * gib) == 1
    assert chunk_size(26, batch=32, dtype="complex64", states_per_sample=tri, available=16 * gib) == 2
    torch_set = states_per_sample(get_kernel_set("torch"), True)
    assert chunk_size(26, batch=32, dtype="complex64", states_per_sample=torch_set, available=16 * gib) == 1
