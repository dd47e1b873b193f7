"""Finite-shot statistics of qhybrid devices against the exact results (seeded, loose tolerance)."""
from __future__ import annotations

import warnings

import numpy as np
import pennylane as qml
import pytest

from crosscheck import DEVICES, DTYPES, default_qubit, qhybrid_device
from random_circuits import build, random_circuit

pytestmark = [pytest.mark.parametrize("device", DEVICES),
              pytest.mark.parametrize("c_dtype", DTYPES)]

SHOTS = 20_000
# 5 sigma of a frequency estimated from SHOTS samples (sigma <= 0.5 / sqrt(SHOTS))
PROB_TOL = 5 * 0.5 / np.sqrt(SHOTS)


def _circuit(n, seed=0):
    rng = np.random.default_rng(2000 + seed)
    spec, params = random_circuit(rng, n_wires=n, depth=30)
    return build(spec, params)


def _qnode(device, c_dtype, n, ops, measure, *, seed=1, shots=SHOTS):
    dev = qhybrid_device(device, n, c_dtype, seed=seed)

    def circuit():
        for op in ops:
            qml.apply(op)
        return measure()

    return qml.QNode(circuit, dev, shots=shots)


def test_samples_follow_probabilities(device, c_dtype):
    n = 4
    ops = _circuit(n)
    samples = np.asarray(_qnode(device, c_dtype, n, ops, qml.sample)())
    assert samples.shape == (SHOTS, n)
    assert set(np.unique(samples)) <= {0, 1}
    index = samples @ (2 ** np.arange(n - 1, -1, -1))  # wire 0 most significant
    freq = np.bincount(index, minlength=2**n) / SHOTS
    exact = default_qubit(ops, [qml.probs(wires=range(n))], n)
    np.testing.assert_allclose(freq, exact, atol=PROB_TOL)


def test_samples_on_wire_subset(device, c_dtype):
    n = 4
    ops = _circuit(n, seed=1)
    samples = np.asarray(_qnode(device, c_dtype, n, ops, lambda: qml.sample(wires=[3, 1]))())
    assert samples.shape == (SHOTS, 2)
    freq = np.bincount(samples @ [2, 1], minlength=4) / SHOTS
    exact = default_qubit(ops, [qml.probs(wires=[3, 1])], n)
    np.testing.assert_allclose(freq, exact, atol=PROB_TOL)


def test_counts(device, c_dtype):
    n = 3
    ops = _circuit(n, seed=2)
    counts = _qnode(device, c_dtype, n, ops, qml.counts)()
    assert sum(counts.values()) == SHOTS
    assert all(len(k) == n and set(k) <= {"0", "1"} for k in counts)
    exact = default_qubit(ops, [qml.probs(wires=range(n))], n)
    freq = np.array([counts.get(format(i, f"0{n}b"), 0) for i in range(2**n)]) / SHOTS
    np.testing.assert_allclose(freq, exact, atol=PROB_TOL)


def test_shot_expval_var_probs(device, c_dtype):
    n = 4
    ops = _circuit(n, seed=3)
    h = qml.Hamiltonian([0.5, -0.8, 0.3], [qml.PauliZ(0) @ qml.PauliZ(2), qml.PauliX(1),
                                           qml.PauliY(3) @ qml.PauliZ(0)])
    mps = [qml.expval(h), qml.var(qml.PauliX(1)), qml.probs(wires=[2, 0])]
    got = _qnode(device, c_dtype, n, ops, lambda: (qml.expval(h), qml.var(qml.PauliX(1)),
                                                   qml.probs(wires=[2, 0])))()
    exact = default_qubit(ops, mps, n)
    np.testing.assert_allclose(got[0], exact[0], atol=0.05)
    np.testing.assert_allclose(got[1], exact[1], atol=0.05)
    np.testing.assert_allclose(got[2], exact[2], atol=PROB_TOL)


def test_seed_makes_samples_reproducible(device, c_dtype):
    n = 3
    ops = _circuit(n, seed=4)

    def run(seed):
        return np.asarray(_qnode(device, c_dtype, n, ops, qml.sample, seed=seed, shots=200)())

    np.testing.assert_array_equal(run(7), run(7))
    assert not np.array_equal(run(7), run(8))


def test_shot_vector(device, c_dtype):
    n = 3
    ops = _circuit(n, seed=5)
    got = _qnode(device, c_dtype, n, ops, lambda: qml.expval(qml.PauliZ(0)), shots=(5000, 5000))()
    assert len(got) == 2
    exact = default_qubit(ops, [qml.expval(qml.PauliZ(0))], n)
    for g in got:
        np.testing.assert_allclose(g, exact, atol=0.1)


def test_device_level_shots_option(device, c_dtype):
    """``qml.device("qhybrid.cpu", shots=...)`` (deprecated by PennyLane, still an option)."""
    n = 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dev = qhybrid_device(device, n, c_dtype, shots=500, seed=3)

        @qml.qnode(dev)
        def circuit():
            qml.Hadamard(0)
            qml.CNOT([0, 1])
            return qml.sample()

        samples = np.asarray(circuit())
    assert samples.shape == (500, 2)
    assert np.all(samples[:, 0] == samples[:, 1])


def test_sampled_observables(device, c_dtype):
    """Samples and counts of observables (eigenvalues), Hermitian expval from samples."""
    n = 2
    herm = np.array([[1, 2 - 1j], [2 + 1j, -0.5]])
    ops = [qml.RY(0.7, 0), qml.CNOT([0, 1]), qml.RX(0.4, 1)]

    def measure():
        return (qml.expval(qml.Hermitian(herm, wires=1)), qml.counts(qml.PauliX(0) @ qml.PauliZ(1)),
                qml.sample(qml.Hermitian(herm, wires=1)))

    e, counts, samples = _qnode(device, c_dtype, n, ops, measure)()
    exact = default_qubit(ops, [qml.expval(qml.Hermitian(herm, wires=1)),
                                qml.expval(qml.PauliX(0) @ qml.PauliZ(1))], n)
    eigvals = np.linalg.eigvalsh(herm)
    assert set(np.round(np.unique(samples), 8)) <= set(np.round(eigvals, 8))
    assert set(counts) <= {-1.0, 1.0} and sum(counts.values()) == SHOTS
    spread = np.ptp(eigvals)
    np.testing.assert_allclose(e, exact[0], atol=5 * spread / np.sqrt(SHOTS))
    np.testing.assert_allclose((counts.get(1.0, 0) - counts.get(-1.0, 0)) / SHOTS, exact[1],
                               atol=5 / np.sqrt(SHOTS))
