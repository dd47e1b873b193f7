"""qhybrid.cpu / qhybrid.gpu against default.qubit and the reference oracle: forward results.

Random seeded circuits over the whole native gate set, with long diagonal
runs and single-wire runs to exercise the engine's fusion passes. States are
compared exactly (global phase included: PennyLane's ``state()`` is physical).
"""
from __future__ import annotations

import zlib

import numpy as np
import pennylane as qml
import pytest

from crosscheck import (DEVICES, DTYPES, as_list, assert_all_close, compare, default_qubit, execute,
                        qhybrid_device, tol)
from random_circuits import (ADJOINTABLE, GATES, Gate, build, random_circuit, random_gate,
                             random_hamiltonian, random_observables, random_pauli_word)

pytestmark = [pytest.mark.parametrize("device", DEVICES),
              pytest.mark.parametrize("c_dtype", DTYPES)]


def _scramble(n_wires):
    """A fixed entangling prefix built from the simplest gates."""
    ops = [qml.RY(0.3 + 0.4 * w, wires=w) for w in range(n_wires)]
    ops += [qml.CNOT([w, (w + 1) % n_wires]) for w in range(n_wires)]
    ops += [qml.RX(0.2 + 0.3 * w, wires=w) for w in range(n_wires)]
    return ops


GATE_CASES = [(name, False) for name in GATES] + [(name, True) for name in ADJOINTABLE]


@pytest.mark.parametrize(("name", "adjoint"), GATE_CASES,
                         ids=[f"{n}{'-adjoint' if a else ''}" for n, a in GATE_CASES])
def test_each_gate(device, c_dtype, name, adjoint):
    """One gate name, three times on random wires, after an entangling prefix: the state."""
    n = 5
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    spec = [random_gate(rng, name, n) for _ in range(3)]
    spec = [Gate(g.name, g.wires, g.n_params, g.matrix, adjoint) for g in spec]
    params = rng.uniform(-np.pi, np.pi, size=sum(g.n_params for g in spec))
    ops = _scramble(n) + build(spec, params)
    compare(device, c_dtype, ops, [qml.state()], n, what=f"{name} adjoint={adjoint}: {ops[-3:]}")


@pytest.mark.parametrize("seed", range(10))
def test_random_circuit_state(device, c_dtype, seed):
    rng = np.random.default_rng(seed)
    n = 3 + seed % 5
    spec, params = random_circuit(rng, n_wires=n, depth=80)
    compare(device, c_dtype, build(spec, params), [qml.state()], n, what=f"seed {seed}")


@pytest.mark.parametrize("seed", range(3))
def test_long_diagonal_run(device, c_dtype, seed):
    """40 diagonal gates in a row (fused into one phase pass), then mixing, then more."""
    rng = np.random.default_rng(50 + seed)
    n = 6
    diagonal = ["PauliZ", "S", "T", "RZ", "PhaseShift", "CZ", "IsingZZ", "MultiRZ", "CRZ",
                "ControlledPhaseShift", "DiagonalUnitary", "GlobalPhase"]
    spec = [random_gate(rng, str(rng.choice(diagonal)), n) for _ in range(40)]
    spec += [Gate("Hadamard", (w,)) for w in range(0, n, 2)]
    spec += [random_gate(rng, str(rng.choice(diagonal)), n) for _ in range(20)]
    params = rng.uniform(-np.pi, np.pi, size=sum(g.n_params for g in spec))
    ops = [qml.Hadamard(w) for w in range(n)] + build(spec, params)
    compare(device, c_dtype, ops, [qml.state(), qml.probs(wires=[4, 1])], n)


@pytest.mark.parametrize("seed", range(3))
def test_single_wire_runs(device, c_dtype, seed):
    """Runs of 1-qubit gates on one wire (fused into one 2x2), broken by two-qubit gates."""
    rng = np.random.default_rng(70 + seed)
    n = 5
    single = ["PauliX", "PauliY", "PauliZ", "Hadamard", "S", "T", "SX", "RX", "RY", "RZ",
              "PhaseShift", "Rot"]
    spec = []
    for w in [0, 0, 3, 4, 2, 0]:
        spec += [random_gate(rng, str(rng.choice(single)), n, wires=(w,)) for _ in range(12)]
        spec.append(Gate("CNOT", (w, (w + 1) % n)))
    params = rng.uniform(-np.pi, np.pi, size=sum(g.n_params for g in spec))
    compare(device, c_dtype, _scramble(n) + build(spec, params), [qml.state()], n)


@pytest.mark.parametrize("seed", range(3))
def test_probabilities_on_wire_subsets(device, c_dtype, seed):
    rng = np.random.default_rng(200 + seed)
    n = 6
    spec, params = random_circuit(rng, n_wires=n, depth=50)
    mps = [qml.probs(wires=range(n)), qml.probs(wires=[5, 0, 3]), qml.probs(wires=[2]),
           qml.probs(wires=[1, 4]), qml.probs(wires=[4, 1]), qml.probs()]
    compare(device, c_dtype, build(spec, params), mps, n)


def _observable_cases():
    return list(random_observables(np.random.default_rng(0), 5))


@pytest.mark.parametrize("kind", _observable_cases())
def test_expval_and_var(device, c_dtype, kind):
    rng = np.random.default_rng(300)
    n = 5
    spec, params = random_circuit(rng, n_wires=n, depth=50)
    obs = random_observables(np.random.default_rng(1), n)[kind]
    mps = [qml.expval(obs), qml.var(obs)]
    compare(device, c_dtype, build(spec, params), mps, n, what=f"{kind}: {obs}")


def test_many_z_terms_hamiltonian(device, c_dtype):
    """100 all-Z words (the engine's cached-diagonal path) plus a few X/Y words."""
    rng = np.random.default_rng(400)
    n = 7
    spec, params = random_circuit(rng, n_wires=n, depth=60)
    h_z = random_hamiltonian(rng, n, terms=100, z_fraction=1.0)
    h_mixed = random_hamiltonian(rng, n, terms=30, z_fraction=0.8)
    mps = [qml.expval(h_z), qml.expval(h_mixed), qml.var(h_z)]
    compare(device, c_dtype, build(spec, params), mps, n)


def test_repeated_runs_do_not_reuse_stale_caches(device, c_dtype):
    """Same words, new coefficients / same coefficients, other wires, on one device."""
    rng = np.random.default_rng(500)
    n = 5
    dev = qhybrid_device(device, n, c_dtype)
    spec, params = random_circuit(rng, n_wires=n, depth=40)
    ops = build(spec, params)
    words = [random_pauli_word(rng, n, only_z=True) for _ in range(8)]
    cases = [qml.Hamiltonian(rng.uniform(-1, 1, 8), words) for _ in range(3)]
    cases.append(qml.Hamiltonian([1.0, 0.5], [qml.PauliZ(0) @ qml.PauliZ(1), qml.PauliZ(2)]))
    cases.append(qml.Hamiltonian([1.0, 0.5], [qml.PauliZ(3) @ qml.PauliZ(4), qml.PauliZ(2)]))
    for h in cases:
        for circuit in (ops, ops[: len(ops) // 2]):
            got = execute(dev, circuit, [qml.expval(h)])
            want = default_qubit(circuit, [qml.expval(h)], n)
            np.testing.assert_allclose(got, want, err_msg=str(h), **tol(c_dtype))


@pytest.mark.parametrize("seed", range(2))
def test_broadcast_forward(device, c_dtype, seed):
    rng = np.random.default_rng(600 + seed)
    n = 4 + seed
    spec, params = random_circuit(rng, n_wires=n, depth=40, batch=3)
    obs = random_observables(rng, n)
    mps = [qml.state(), qml.probs(wires=[n - 1, 1]), qml.expval(obs["hamiltonian"]),
           qml.expval(obs["hermitian"]), qml.var(obs["prod"])]
    compare(device, c_dtype, build(spec, params), mps, n)


def test_broadcast_partial(device, c_dtype):
    """Only some parameters broadcast; the rest scalars."""
    n = 4
    x = np.array([0.1, 0.7, -1.2, 2.0])
    ops = _scramble(n) + [qml.RX(x, 0), qml.IsingZZ(0.3, [1, 2]), qml.CRY(x[::-1], [2, 3]),
                          qml.MultiRZ(x, [0, 1, 3]), qml.Rot(0.1, x, 0.3, 2), qml.GlobalPhase(x)]
    mps = [qml.state(), qml.expval(qml.PauliZ(0) @ qml.PauliX(3))]
    compare(device, c_dtype, ops, mps, n)


def test_state_has_requested_dtype(device, c_dtype):
    dev = qhybrid_device(device, 3, c_dtype)
    state = execute(dev, [qml.Hadamard(0), qml.CNOT([0, 2])], [qml.state()])
    assert np.asarray(state).dtype == np.dtype(c_dtype)


def test_custom_wire_labels(device, c_dtype):
    wires = ["a", 7, "c", "d"]
    dev = qhybrid_device(device, wires, c_dtype)
    ops = [qml.Hadamard("a"), qml.CNOT(["a", "d"]), qml.RY(0.3, 7), qml.IsingXY(0.7, ["d", 7]),
           qml.Toffoli(["d", 7, "c"]), qml.RZ(0.2, "c")]
    mps = [qml.state(), qml.probs(wires=["d", "a"]), qml.expval(qml.PauliZ("c") @ qml.PauliX(7))]
    got = as_list(execute(dev, ops, mps), 3)
    want = as_list(execute(qml.device("default.qubit", wires=wires), ops, mps), 3)
    assert_all_close(got, want, **tol(c_dtype))


def test_identity_circuit_and_unused_wires(device, c_dtype):
    """An empty circuit, and a device with more wires than the circuit touches."""
    n = 6
    ops = [qml.Hadamard(1), qml.RZ(0.4, 1)]
    mps = [qml.state(), qml.probs(wires=[1]), qml.expval(qml.PauliZ(5))]
    compare(device, c_dtype, ops, mps, n)
    compare(device, c_dtype, [], [qml.state()], 3)
