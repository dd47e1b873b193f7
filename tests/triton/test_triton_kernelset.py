"""The ``"triton"`` kernel set (interpreter) against the torch reference set, method by method:
gates (layer, dense, controlled, diagonal, phase lookup, Walsh-Hadamard), reductions, generator
overlaps and the QAOA pieces, complex128 to 1e-10 and complex64 to 1e-5."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

TOL = {torch.complex128: 1e-10, torch.complex64: 1e-5}
DTYPES = [pytest.param(torch.complex128, id="c128"), pytest.param(torch.complex64, id="c64")]


@pytest.fixture(scope="module")
def sets(triton_ops):
    kernels = pytest.importorskip("qhybrid.sim.kernels.torch_set", reason="needs the kernel-set package")
    from qhybrid.sim.kernels import get_kernel_set

    ks = get_kernel_set("triton")
    assert ks.runs_on("cpu") and ks.name == "triton"
    return ks, kernels.TorchKernels()


def _state(rng, b, n, dtype):
    s = rng.normal(size=(b, 2**n)) + 1j * rng.normal(size=(b, 2**n))
    return torch.tensor(s / np.linalg.norm(s, axis=1, keepdims=True)).to(dtype)


def _unitaries(rng, count, d, dtype):
    out = []
    for _ in range(count):
        q, r = np.linalg.qr(rng.normal(size=(d, d)) + 1j * rng.normal(size=(d, d)))
        out.append(q * (np.diag(r) / np.abs(np.diag(r))))
    return torch.tensor(np.array(out)).to(dtype)


def _same(a, b, dtype, scale=1.0):
    diff = float((a.to(torch.complex128) - b.to(torch.complex128)).abs().max())
    assert diff <= TOL[dtype] * scale, diff


@pytest.mark.parametrize("dtype", DTYPES)
def test_gates_match_torch_set(sets, guarded, dtype, rng):
    tri, ref = sets
    n, b = 6, 2
    psi = _state(rng, b, n, dtype)
    got, want = guarded(psi), psi.clone()
    step = SimpleNamespace(wires=(5, 0, 3), matrices=_unitaries(rng, 6, 2, dtype).reshape(3, 2, 2, 2))
    assert tri.apply_layer(got.t, step, n) is got.t
    ref.apply_layer(want, step, n)
    _same(got.t, want, dtype)
    for wires, p in (((2, 4), 1), ((1, 5, 0), 2)):
        u = _unitaries(rng, p, 2 ** len(wires), dtype)
        tri.apply_dense(got.t, u, wires, n)
        ref.apply_dense(want, u, wires, n)
        _same(got.t, want, dtype)
    diag = torch.exp(1j * torch.tensor(rng.uniform(-3, 3, size=(b, 4)))).to(dtype)
    tri.apply_diagonal(got.t, diag, (4, 1), n)
    ref.apply_diagonal(want, diag, (4, 1), n)
    table = torch.exp(1j * torch.tensor(rng.uniform(-3, 3, size=(1, 5)))).to(dtype)
    index = torch.tensor(np.arange(2**n) % 5, dtype=torch.int32)
    tri.phase_lookup(got.t, table, index)
    ref.phase_lookup(want, table, index)
    tri.walsh_hadamard(got.t, (0, 2, 5), n)
    ref.walsh_hadamard(want, (0, 2, 5), n)
    _same(got.t, want, dtype, scale=8)
    u = _unitaries(rng, 1, 2, dtype)
    full = torch.eye(4, dtype=dtype)[None].clone()
    full[0, 2:, 2:] = u[0]
    tri.apply_controlled(got.t, u, (3,), (1,), n)
    ref.apply_dense(want, full, (3, 1), n)
    _same(got.t, want, dtype, scale=8)


@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions_match_torch_set(sets, guarded, dtype, rng):
    tri, ref = sets
    n = 5
    psi, bra = _state(rng, 2, n, dtype), _state(rng, 2, n, dtype)
    w = torch.tensor(rng.normal(size=2**n))
    _same(tri.weighted_norm(psi, w), ref.weighted_norm(psi, w), dtype)
    _same(tri.vdot_real(psi, bra), ref.vdot_real(psi, bra), dtype)
    for x, z in ((0, 0b10110), (0b00011, 0b01001)):
        _same(tri.pauli_expval(psi, x, z), ref.pauli_expval(psi, x, z), dtype)
    out = guarded(torch.zeros_like(psi))
    tri.diag_mul_into(out.t, psi, w)
    want = torch.zeros_like(psi)
    ref.diag_mul_into(want, psi, w)
    _same(out.t, want, dtype)
    gen_d = np.array([0.5, -0.5, 1.5, 2.0])
    gen = rng.normal(size=(4, 4)) + 1j * rng.normal(size=(4, 4))
    for g, wires in ((gen_d, (3, 0)), (gen + gen.conj().T, (1, 4)), (np.array([[0, 1], [1, 0]]), (2,))):
        _same(tri.generator_overlap(bra, psi, g, wires, n), ref.generator_overlap(bra, psi, g, wires, n), dtype, 4)


@pytest.mark.parametrize("dtype", DTYPES)
def test_qaoa_pieces_match_torch_set(sets, guarded, dtype, rng):
    tri, ref = sets
    n = 5
    psi = _state(rng, 1, n, dtype)
    got, want = guarded(psi), psi.clone()
    cost = torch.tensor(rng.integers(-4, 5, size=2**n), dtype=torch.float64)
    tri.qaoa_cost_phase(got.t, cost, 0.37)
    ref.qaoa_cost_phase(want, cost, 0.37)
    tri.qaoa_mixer(got.t, -0.81, n)
    ref.qaoa_mixer(want, -0.81, n)
    _same(got.t, want, dtype)


@pytest.mark.parametrize("dtype,per_sample", [(torch.complex128, False), (torch.complex64, True)])
def test_qml_forward_matches_torch_set(sets, guarded, dtype, per_sample, rng):
    """The classifier's gate list (rotations, a CNOT ring, a repeated wire) with shared matrices, or
    one matrix per sample; runs of uncontrolled gates fused two at a time."""
    tri, ref = sets
    n, b = 4, 3
    gates = [(-1, w) for w in range(n)] + [(w, (w + 1) % n) for w in range(n)] + [(-1, 2), (-1, 2)]
    plan = SimpleNamespace(gates=gates, n_wires=n)
    small = type(tri)(tiles=tri.tiles.__class__(pass_bits=2, tile=16))
    if per_sample:
        mats = _unitaries(rng, len(gates) * b, 2, dtype).reshape(len(gates), b, 2, 2)
    else:
        mats = _unitaries(rng, len(gates), 2, dtype)
    psi = _state(rng, b, n, dtype)
    got, want = guarded(psi), psi.clone()
    small.qml_forward(got.t, mats, plan, None)
    if not per_sample:
        ref.qml_forward(want, mats, plan, torch.empty(b * 2**n, dtype=dtype))
    else:  # the reference takes shared matrices: one sample at a time
        for s_ in range(b):
            row = want[s_:s_ + 1].clone()
            ref.qml_forward(row, mats[:, s_], plan, torch.empty(2**n, dtype=dtype))
            want[s_] = row[0]
    _same(got.t, want, dtype)
