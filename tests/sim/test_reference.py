"""The reference oracle against default.qubit."""
from __future__ import annotations

import numpy as np
import pennylane as qml
import pytest

from qhybrid.sim import reference
from random_circuits import build, random_circuit, random_observables

ATOL = 1e-10


def _tape(ops, measurements):
    return qml.tape.QuantumScript(ops, measurements)


def _default_qubit(tape, n_wires):
    dev = qml.device("default.qubit", wires=n_wires)
    return qml.execute([tape], dev)[0]


@pytest.mark.parametrize("seed", range(6))
def test_random_circuit_state_matches_default_qubit(seed):
    rng = np.random.default_rng(seed)
    n = 3 + seed % 4
    spec, params = random_circuit(rng, n_wires=n, depth=60)
    tape = _tape(build(spec, params), [qml.state()])
    got = reference.simulate(tape, wire_order=range(n))
    np.testing.assert_allclose(got, _default_qubit(tape, n), atol=ATOL)


@pytest.mark.parametrize("seed", range(3))
def test_measurements_match_default_qubit(seed):
    rng = np.random.default_rng(100 + seed)
    n = 4 + seed
    spec, params = random_circuit(rng, n_wires=n, depth=40)
    ops = build(spec, params)
    obs = random_observables(rng, n)
    mps = [qml.probs(wires=range(n)), qml.probs(wires=[n - 1, 0]), qml.probs(wires=[2])]
    mps += [qml.expval(o) for o in obs.values()]
    mps += [qml.var(obs[k]) for k in ("pauli_word", "hermitian", "prod", "sum", "projector_state")]
    tape = _tape(ops, mps)
    got = reference.simulate(tape, wire_order=range(n))
    want = _default_qubit(tape, n)
    for mp, g, w in zip(mps, got, want):
        np.testing.assert_allclose(g, w, atol=ATOL, err_msg=repr(mp))


def test_broadcast_matches_default_qubit():
    rng = np.random.default_rng(7)
    spec, params = random_circuit(rng, n_wires=4, depth=30, batch=3)
    obs = random_observables(rng, 4)
    mps = [qml.state(), qml.probs(wires=[3, 1]), qml.expval(obs["hamiltonian"]), qml.var(obs["prod"])]
    tape = _tape(build(spec, params), mps)
    assert tape.batch_size == 3
    got = reference.simulate(tape, wire_order=range(4))
    want = _default_qubit(tape, 4)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, w, atol=ATOL)


def test_state_prep_and_wire_labels():
    rng = np.random.default_rng(3)
    vec = rng.normal(size=8) + 1j * rng.normal(size=8)
    vec /= np.linalg.norm(vec)
    ops = [qml.StatePrep(vec, wires=["a", "b", "c"]), qml.CNOT(["c", "a"]), qml.RX(0.4, "b")]
    tape = _tape(ops, [qml.state(), qml.expval(qml.PauliZ("a") @ qml.PauliY("c"))])
    got = reference.simulate(tape)
    dev = qml.device("default.qubit", wires=["a", "b", "c"])
    want = qml.execute([tape], dev)[0]
    np.testing.assert_allclose(got[0], want[0], atol=ATOL)
    np.testing.assert_allclose(got[1], want[1], atol=ATOL)


def test_complex64_state_is_complex64_and_close():
    rng = np.random.default_rng(11)
    spec, params = random_circuit(rng, n_wires=5, depth=50)
    tape = _tape(build(spec, params), [qml.state()])
    got = reference.simulate(tape, wire_order=range(5), dtype=np.complex64)
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, _default_qubit(tape, 5), atol=1e-5)


def test_bell_state_by_hand():
    tape = _tape([qml.Hadamard(0), qml.CNOT([0, 1])], [qml.state(), qml.probs(wires=[1])])
    state, probs = reference.simulate(tape)
    np.testing.assert_allclose(state, np.array([1, 0, 0, 1]) / np.sqrt(2), atol=ATOL)
    np.testing.assert_allclose(probs, [0.5, 0.5], atol=ATOL)


def test_sampled_measurement_is_refused():
    tape = _tape([qml.Hadamard(0)], [qml.sample(wires=[0])])
    with pytest.raises(NotImplementedError, match="SampleMP"):
        reference.simulate(tape)
