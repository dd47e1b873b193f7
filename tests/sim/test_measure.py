"""probs, var, state and seeded sampling."""
from __future__ import annotations

import numpy as np
import torch

from qhybrid.sim import Circuit, Measurement, Observable, Operation, simulate
from qhybrid.sim.measure import probs, sample_bits


def _bell():
    return (Operation("Hadamard", (0,)), Operation("CNOT", (0, 1)), Operation("RY", (2,), (0.8,)))


def test_probs_marginal_and_order():
    c = Circuit(3, _bell(), (Measurement("probs", wires=(2, 0)), Measurement("probs")))
    p20, pall = simulate(c)
    np.testing.assert_allclose(p20.sum().item(), 1.0)
    c2, s2 = np.cos(0.4) ** 2, np.sin(0.4) ** 2
    np.testing.assert_allclose(p20[0].numpy(), [c2 / 2, c2 / 2, s2 / 2, s2 / 2], atol=1e-12)
    assert pall.shape == (1, 8)


def test_var_of_pauli_and_hamiltonian():
    c = Circuit(3, _bell(), (Measurement("var", Observable.pauli({"Z": 1.0}, wires=(2,))),
                             Measurement("var", Observable.pauli({"ZZ": 1.0}, wires=(0, 1)))))
    v2, vzz = simulate(c)
    np.testing.assert_allclose(v2.item(), 1 - np.cos(0.8) ** 2, atol=1e-12)
    np.testing.assert_allclose(vzz.item(), 0.0, atol=1e-12)


def test_state_measurement_is_a_copy():
    c = Circuit(2, _bell()[:2], (Measurement("state"),))
    (s,) = simulate(c)
    np.testing.assert_allclose(s[0].numpy(), np.array([1, 0, 0, 1]) / np.sqrt(2), atol=1e-12)


def test_sampling_is_seeded_and_correlated():
    s = torch.tensor([[1, 0, 0, 1]], dtype=torch.complex128) / np.sqrt(2)
    a = sample_bits(s, 200, 2, rng=7)
    b = sample_bits(s, 200, 2, rng=np.random.default_rng(7))
    np.testing.assert_array_equal(a, b)
    assert a.shape == (1, 200, 2) and np.all(a[0, :, 0] == a[0, :, 1])
    assert 60 < a[0, :, 0].sum() < 140
    np.testing.assert_allclose(probs(s, [1], 2)[0].numpy(), [0.5, 0.5])
