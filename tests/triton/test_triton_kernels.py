"""The Triton gate, diagonal and reduction kernels under the interpreter, against the
reference simulator's dense tensordot (``sim.reference.apply_matrix``), complex128 to 1e-10
and complex64 to 1e-5, every written buffer inside guard bands."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from qhybrid.sim.reference import apply_matrix as ref_apply

TOL = {torch.complex128: 1e-10, torch.complex64: 1e-5}
DTYPES = [torch.complex128, torch.complex64]


def _unitary(rng, d):
    z = rng.normal(size=(d, d)) + 1j * rng.normal(size=(d, d))
    q, r = np.linalg.qr(z)
    return q * (np.diag(r) / np.abs(np.diag(r)))


def _state(rng, b, n):
    s = rng.normal(size=(b, 2**n)) + 1j * rng.normal(size=(b, 2**n))
    return s / np.linalg.norm(s, axis=1, keepdims=True)


def _ref(states, matrices, wires, n):
    """Each row of ``states`` through its matrix (``matrices`` (P, d, d)) on ``wires``."""
    out = []
    for b, s in enumerate(states):
        m = matrices[b if len(matrices) > 1 else 0]
        out.append(ref_apply(s.reshape((2,) * n), m, list(wires)).reshape(-1))
    return np.array(out)


def _controlled(u, k):
    """``u`` controlled on ``k`` wires placed before its targets."""
    d = u.shape[0]
    full = np.eye(d * 2**k, dtype=complex)
    full[-d:, -d:] = u
    return full


def _close(got, want, dtype):
    got = got.detach().to(torch.complex128).numpy()
    assert np.abs(got - want).max() <= TOL[dtype], np.abs(got - want).max()


@pytest.mark.parametrize("dtype", DTYPES)
def test_random_circuit_matches_reference(triton_ops, guarded, dtype, rng):
    """A fused layer (per-row gates, two passes, several tiles), dense 2- and 3-qubit gates, a
    controlled 1-qubit and a controlled 2-qubit gate, and a 2-wire diagonal, on a batch of 2."""
    ops, n, b = triton_ops, 6, 2
    tiles = ops.Tiles(pass_bits=2, tile=16, block=32, dense_rows=4)
    want = _state(rng, b, n)
    x = guarded(torch.tensor(want, dtype=dtype))
    # fused 1-qubit layer on wires 0, 2, 3, 5: gate matrices per batch row
    wires = [0, 2, 3, 5]
    mats = np.array([[_unitary(rng, 2) for _ in wires] for _ in range(b)])
    ops.apply_layer(x.t, [n - 1 - w for w in wires], torch.tensor(mats, dtype=dtype), tiles=tiles)
    for i, w in enumerate(wires):
        want = _ref(want, mats[:, i], [w], n)
    _close(x.t, want, dtype)
    steps = [((3, 1), (), _unitary(rng, 4)), ((0, 4, 2), (), _unitary(rng, 8)),
             ((2,), (5,), _unitary(rng, 2)), ((1, 0), (4,), _unitary(rng, 4))]
    for targets, controls, u in steps:
        ops.apply_dense(x.t, torch.tensor(u[None], dtype=dtype), [n - 1 - w for w in targets],
                        [n - 1 - w for w in controls], tiles=tiles)
        want = _ref(want, _controlled(u, len(controls))[None], [*controls, *targets], n)
        _close(x.t, want, dtype)
    diag = np.exp(1j * rng.uniform(-np.pi, np.pi, size=(b, 4)))
    ops.apply_diagonal(x.t, torch.tensor(diag, dtype=dtype), [n - 1 - 4, n - 1 - 1], tiles=tiles)
    want = _ref(want, np.array([np.diag(d) for d in diag]), [4, 1], n)
    _close(x.t, want, dtype)


def test_planar_layout_and_butterflies(triton_ops, guarded, rng):
    """The planar ``(B, 2, N)`` layout gives the complex layout's result; butterflies are
    ``sqrt(2) H`` per bit."""
    ops, n = triton_ops, 5
    psi = _state(rng, 1, n)
    x = guarded(ops.planar(torch.tensor(psi)))
    ops.walsh(x.t, [0, 3, 4], tiles=ops.Tiles(pass_bits=2, tile=8))
    want = psi
    h = np.array([[1, 1], [1, -1]])
    for bit in (0, 3, 4):
        want = _ref(want, h[None], [n - 1 - bit], n)
    _close(ops.complex_of(x.t), want, torch.complex128)


@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions(triton_ops, guarded, dtype, rng):
    """Pauli-Z strings' expectation, weighted inner products and ``out = w * x``."""
    ops, n, b = triton_ops, 5, 2
    tiles = ops.Tiles(block=8)
    a_np, b_np = _state(rng, b, n), _state(rng, b, n)
    a, c = torch.tensor(a_np, dtype=dtype), torch.tensor(b_np, dtype=dtype)
    a64, c64 = a.to(torch.complex128).numpy(), c.to(torch.complex128).numpy()
    z = np.arange(2**n)
    masks, coeffs = [0b10001, 0b00110, 0b01000], [0.5, -1.25, 2.0]
    zsign = sum(cf * (1 - 2 * (np.array([bin(v & m).count("1") for v in z]) & 1)) for cf, m in zip(coeffs, masks))
    got = ops.expect(a, ops.Weights.pauli_z(coeffs, masks, "cpu"), tiles=tiles).numpy()
    assert np.allclose(got, (np.abs(a64) ** 2 * zsign).sum(1), atol=TOL[torch.complex128])
    w = torch.tensor(rng.normal(size=2**n))
    got = ops.inner(a, c, ops.Weights("values", w=w), tiles=tiles).numpy()
    assert np.allclose(got, (np.conj(a64) * w.numpy() * c64).sum(1), atol=TOL[torch.complex128])
    levels, index = torch.tensor([-1.0, 0.5, 3.0]), torch.tensor(z % 3, dtype=torch.int16)
    got = ops.inner(a, c, ops.Weights("lookup", w=levels, index=index), tiles=tiles).numpy()
    assert np.allclose(got, (np.conj(a64) * levels.numpy()[z % 3] * c64).sum(1), atol=TOL[torch.complex128])
    out = guarded(torch.zeros_like(a))
    ops.scale(a, ops.Weights("values", w=w), out.t, tiles=tiles)
    _close(out.t, a64 * w.numpy(), dtype)


def test_pass_diagonals_and_init(triton_ops, guarded, rng):
    """A pass's looked-up and direct diagonals, and its constant start (the QAOA first layer)."""
    ops, n = triton_ops, 4
    vals = torch.tensor(rng.normal(size=2**n))
    x = guarded(torch.zeros((1, 2**n), dtype=torch.complex128))
    ops.run_pass(x.t, [], direct=(vals, 0.7), init=0.25)
    _close(x.t, 0.25 * np.exp(-0.7j * vals.numpy())[None], torch.complex128)
    table = torch.tensor(np.exp(1j * rng.normal(size=5)))
    index = torch.tensor(np.arange(2**n) % 3, dtype=torch.int8)
    ops.run_pass(x.t, [1, 2], lookup=(index, 2, table), post="butterfly")
    want = 0.25 * np.exp(-0.7j * vals.numpy()) * table.numpy()[np.arange(2**n) % 3 + 2]
    for bit in (1, 2):
        want = _ref(want[None], np.array([[[1, 1], [1, -1]]]), [n - 1 - bit], n)[0]
    _close(x.t, want[None], torch.complex128)


def test_guard_bands_catch_an_unmasked_store(triton_ops, guarded):
    """The harness itself: an unmasked store past the end of a guarded buffer trips its guard."""
    import triton
    import triton.language as tl

    @triton.jit
    def unmasked_double(x_ptr, BLOCK: tl.constexpr):
        z = tl.arange(0, BLOCK)
        tl.store(x_ptr + z, tl.load(x_ptr + z) * 2.0)

    g = guarded(torch.ones(10, dtype=torch.float64))
    unmasked_double[(1,)](g.t, BLOCK=16)
    with pytest.raises(AssertionError, match="guard band"):
        g.check()
    pad = (g.buffer.numel() - g.t.numel()) // 2
    g.buffer[-pad:] = g.fill  # restored, so the fixture's own check passes
