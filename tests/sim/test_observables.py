"""Observables: Pauli words as permutation + sign, the cached Z diagonal, dense terms."""
from __future__ import annotations

import numpy as np
import pennylane as qml
import pytest
import torch

from qhybrid.sim import Cache, Observable
from qhybrid.sim.circuit import DenseTerm, PauliTerm
from qhybrid.sim.observables import apply_observable, expval


def _state(n, b, rng, dtype=torch.complex128):
    s = torch.tensor(rng.normal(size=(b, 2**n)) + 1j * rng.normal(size=(b, 2**n)))
    return (s / s.norm(dim=1, keepdim=True)).to(dtype)


def _random_obs(n, terms, rng):
    paulis = []
    for _ in range(terms):
        k = int(rng.integers(1, n + 1))
        wires = rng.choice(n, k, replace=False)
        paulis.append(PauliTerm(complex(rng.normal()), tuple((int(w), str(rng.choice(list("XYZ")))) for w in wires)))
    paulis.append(PauliTerm(0.5, ()))  # identity term
    return Observable(tuple(paulis))


def _dense(obs, n):
    ops = [qml.s_prod(t.coeff.real, qml.prod(*[getattr(qml, "Pauli" + p)(w) for w, p in t.word])
                      if t.word else qml.Identity(0)) for t in obs.paulis]
    return qml.matrix(qml.sum(*ops), wire_order=range(n))


def test_pauli_sum_matches_dense_matrix(kernel_set, rng):
    n = 5
    obs = _random_obs(n, 30, rng)
    psi = _state(n, 2, rng)
    h = _dense(obs, n)
    want = np.einsum("bi,ij,bj->b", psi.numpy().conj(), h, psi.numpy()).real
    np.testing.assert_allclose(expval(psi, obs, n, kernels=kernel_set).numpy(), want, atol=1e-10)
    np.testing.assert_allclose(apply_observable(psi, obs, n, kernels=kernel_set).numpy(), psi.numpy() @ h.T, atol=1e-10)


def test_z_terms_come_from_one_cached_diagonal(rng):
    n = 8
    obs = Observable.pauli({((i, "Z"), (j, "Z")): 0.5 for i in range(n) for j in range(i + 1, n)})
    cache = Cache()
    psi = _state(n, 1, rng)
    a = expval(psi, obs, n, cache=cache)
    assert len(cache) == 1
    b = expval(psi, obs, n, cache=cache)
    np.testing.assert_allclose(a.numpy(), b.numpy())
    np.testing.assert_allclose(a.numpy(), expval(psi, obs, n, kernels="torch").numpy(), atol=1e-10)


def test_dense_term(rng):
    n = 3
    m = rng.normal(size=(4, 4)) + 1j * rng.normal(size=(4, 4))
    m = m + m.conj().T
    obs = Observable(dense=(DenseTerm(2.0, (2, 0), m),))
    psi = _state(n, 1, rng)
    full = 2.0 * qml.matrix(qml.Hermitian(m, wires=[2, 0]), wire_order=range(n))
    want = (psi.numpy().conj() @ full @ psi.numpy().T).real.ravel()
    np.testing.assert_allclose(expval(psi, obs, n).numpy(), want, atol=1e-10)


def test_complex64_tolerance(rng):
    n = 6
    obs = _random_obs(n, 10, rng)
    psi = _state(n, 1, rng)
    a = expval(psi, obs, n).numpy()
    b = expval(psi.to(torch.complex64), obs, n).numpy()
    np.testing.assert_allclose(a, b, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.complex128, torch.complex64])
def test_many_words_grouped_by_low_x_bits(rng, dtype):
    """Hundreds of low-weight words on 11 wires (several 128-amplitude chunks): groups of terms
    sharing the low X bits, the xl = 0 group, lone terms, repeated words, Y phases (imaginary
    terms, alone and beside real ones), complex coefficients (a real and an imaginary term), a batch."""
    n = 11
    paulis = []
    for i in range(300):
        k = int(rng.integers(1, 5))
        wires = rng.choice(n, k, replace=False)
        coeff = complex(rng.normal(), rng.normal() if i % 3 == 0 else 0.0)
        paulis.append(PauliTerm(coeff, tuple((int(w), str(rng.choice(list("XYZ")))) for w in wires)))
    paulis += paulis[:20]  # the same words twice
    obs = Observable(tuple(paulis))
    psi = _state(n, 2, rng, dtype)
    ref = apply_observable(psi.to(torch.complex128), obs, n, kernels="torch")
    got = apply_observable(psi, obs, n, kernels="numba")
    np.testing.assert_allclose(got.to(torch.complex128).numpy(), ref.numpy(),
                               atol=1e-10 if dtype == torch.complex128 else 1e-4)


def test_pauli_terms_sorted_into_groups_real_first():
    """The many-word kernel's grouping: by the low X bits, the real terms of a group before its
    imaginary ones (``gimag``), then by the high X bits."""
    from qhybrid.sim.fastobs import sort_pauli_terms

    L = 8
    xs = np.array([9, 1, 17, 2, 1, 10, 25], dtype=np.int64)
    imag = np.array([1, 0, 0, 1, 1, 0, 0], dtype=np.int64)
    order, gstart, gimag = sort_pauli_terms(xs, imag, L)
    assert [xs[order[a:b]].tolist() for a, b in zip(gstart[:-1], gstart[1:])] == [[1, 17, 25, 1, 9], [10, 2]]
    assert [imag[order[a:b]].tolist() for a, b in zip(gstart[:-1], gstart[1:])] == [[0, 0, 0, 1, 1], [0, 1]]
    assert gimag.tolist() == [3, 6]


@pytest.mark.parametrize("dtype", [torch.complex128, torch.complex64])
def test_lone_words_by_run_length(rng, dtype):
    """Words alone in their group of low X bits (on 11 wires, bit b = wire 10 - b): the lowest
    X bit 3..6 (runs of 8..64 amplitudes, taken run by run) and 0..2 (amplitude by amplitude),
    real and imaginary (Y) phases, a complex coefficient; then a pair sharing its low X bits."""
    words = [((7, "X"),), ((6, "Y"),), ((5, "X"), (10, "Z")), ((4, "Y"), (0, "X")), ((10, "X"),),
             ((9, "Y"), (2, "Z")), ((7, "X"), (5, "Y")), ((8, "X"), (1, "Y"), (3, "Z"))]
    coeffs = [0.7, -1.3, 0.4 + 0.9j, 1.1, -0.6, 0.8, -0.2j, 0.5]
    n = 11
    psi = _state(n, 2, rng, dtype)
    for extra in ((), (PauliTerm(0.3, ((7, "X"), (1, "Z"))), PauliTerm(-0.9, ((7, "Y"), (0, "Y"))))):
        obs = Observable(tuple(PauliTerm(complex(c), w) for c, w in zip(coeffs, words)) + extra)
        ref = apply_observable(psi.to(torch.complex128), obs, n, kernels="torch")
        got = apply_observable(psi, obs, n, kernels="numba")
        np.testing.assert_allclose(got.to(torch.complex128).numpy(), ref.numpy(),
                                   atol=1e-10 if dtype == torch.complex128 else 1e-5)
