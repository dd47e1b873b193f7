"""Structured circuits that hit the engine's special paths, against default.qubit.

QAOA-style blocks of Z-rotations (the phase-lookup fusion and the batched
Z-rotation gradients of the adjoint sweep), state preparation, identity terms
and constants in Hamiltonians, probabilities in an observable's eigenbasis.
"""
from __future__ import annotations

import networkx as nx
import numpy as np
import pennylane as qml
import pytest
from pennylane import numpy as pnp

from crosscheck import (DEVICES, DTYPES, as_list, assert_all_close, compare, default_qubit, execute,
                        qhybrid_device, tol)

# default.qubit's autograd backprop (the peer) casts complex cotangents to real; values are compared
_PEER_NOISE = "ignore:Casting complex values to real:numpy.exceptions.ComplexWarning"
pytestmark = [pytest.mark.parametrize("device", DEVICES),
              pytest.mark.parametrize("c_dtype", DTYPES),
              pytest.mark.filterwarnings(_PEER_NOISE)]


def _grad_tol(c_dtype):
    """Gradients are held to the same tolerance as values."""
    return tol(c_dtype)


def _both_gradients(device, c_dtype, n, circuit, x):
    ours = qml.QNode(circuit, qhybrid_device(device, n, c_dtype), diff_method="adjoint")
    theirs = qml.QNode(circuit, qml.device("default.qubit", wires=n), diff_method="backprop")
    x = pnp.array(x, requires_grad=True)
    return ours(x), theirs(x), qml.grad(ours)(x), qml.grad(theirs)(x)


@pytest.mark.parametrize("p", [1, 3])
def test_qaoa_maxcut_energy_and_gradient(device, c_dtype, p):
    """qml.qaoa cost/mixer layers: runs of IsingZZ-like rotations sharing one angle."""
    n = 7
    graph = nx.gnm_random_graph(n, 10, seed=1967)
    cost_h, mixer_h = qml.qaoa.maxcut(graph)

    def circuit(x):
        for w in range(n):
            qml.Hadamard(w)
        for layer in range(p):
            qml.qaoa.cost_layer(x[0, layer], cost_h)
            qml.qaoa.mixer_layer(x[1, layer], mixer_h)
        return qml.expval(cost_h)

    x = np.random.default_rng(p).uniform(0, np.pi, size=(2, p))
    e_ours, e_theirs, g_ours, g_theirs = _both_gradients(device, c_dtype, n, circuit, x)
    np.testing.assert_allclose(e_ours, e_theirs, **tol(c_dtype))
    np.testing.assert_allclose(g_ours, g_theirs, **_grad_tol(c_dtype))


def test_qaoa_known_energy(device, c_dtype):
    """The PERF_NOTES check value: n=20, m=30, all angles 0.5 -> -10.621603 (complex128 only)."""
    if c_dtype is not np.complex128:
        pytest.skip("the check value is for complex128")
    n = 20
    cost_h, mixer_h = qml.qaoa.maxcut(nx.gnm_random_graph(n, 30, seed=1967))

    @qml.qnode(qhybrid_device(device, n, c_dtype))
    def energy():
        for w in range(n):
            qml.Hadamard(w)
        for _ in range(2):
            qml.qaoa.cost_layer(0.5, cost_h)
            qml.qaoa.mixer_layer(0.5, mixer_h)
        return qml.expval(cost_h)

    np.testing.assert_allclose(energy(), -10.621603, atol=5e-7)


def test_many_distinct_zrot_angles(device, c_dtype):
    """Every Z-rotation with its own trainable angle (too many groups for one lookup table)."""
    n = 6
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]

    def circuit(x):
        for w in range(n):
            qml.RY(0.3 * w + 0.1, w)
        for k, (i, j) in enumerate(pairs):
            qml.IsingZZ(x[k], wires=[i, j])
        for w in range(n):
            qml.RZ(x[len(pairs) + w], w)
        qml.MultiRZ(x[-1], wires=range(n))
        qml.adjoint(qml.IsingZZ(x[0], wires=[0, n - 1]))
        for w in range(n):
            qml.RX(0.2, w)
        return qml.expval(qml.sum(*[qml.PauliZ(i) @ qml.PauliZ(j) for i, j in pairs[:6]],
                                  qml.PauliX(0) @ qml.PauliY(2)))

    x = np.random.default_rng(9).uniform(-np.pi, np.pi, size=len(pairs) + n + 1)
    e_ours, e_theirs, g_ours, g_theirs = _both_gradients(device, c_dtype, n, circuit, x)
    np.testing.assert_allclose(e_ours, e_theirs, **tol(c_dtype))
    np.testing.assert_allclose(g_ours, g_theirs, **_grad_tol(c_dtype))


def test_zrot_block_with_repeated_and_opposite_angles(device, c_dtype):
    """Z-rotations grouped by angle: equal angles, opposite angles, adjoints, zero."""
    n = 5
    ops = [qml.Hadamard(w) for w in range(n)]
    ops += [qml.IsingZZ(0.4, [0, 1]), qml.IsingZZ(0.4, [1, 2]), qml.IsingZZ(-0.4, [2, 3]),
            qml.adjoint(qml.IsingZZ(0.4, [3, 4])), qml.RZ(0.4, 0), qml.RZ(0.0, 1),
            qml.MultiRZ(0.4, [0, 2, 4]), qml.IsingZZ(0.4, [0, 1]), qml.RZ(1.1, 3)]
    ops += [qml.RX(0.3, w) for w in range(n)]
    mps = [qml.state(), qml.expval(qml.PauliZ(0) @ qml.PauliZ(4))]
    compare(device, c_dtype, ops, mps, n)


def test_state_prep_and_basis_state(device, c_dtype):
    n = 4
    rng = np.random.default_rng(21)
    vec = rng.normal(size=2**n) + 1j * rng.normal(size=2**n)
    vec /= np.linalg.norm(vec)
    mps = [qml.state(), qml.expval(qml.PauliX(1) @ qml.PauliZ(3))]
    for prep in (qml.StatePrep(vec, wires=range(n)), qml.BasisState(np.array([1, 0, 1, 1]), wires=range(n)),
                 qml.StatePrep(vec[:4] / np.linalg.norm(vec[:4]), wires=[2, 0])):
        ops = [prep, qml.CNOT([0, 1]), qml.RY(0.3, 3), qml.IsingXY(0.5, [2, 1])]
        got = as_list(execute(qhybrid_device(device, n, c_dtype), ops, mps), 2)
        assert_all_close(got, as_list(default_qubit(ops, mps, n), 2), what=prep.name, **tol(c_dtype))


def test_identity_terms_and_constants(device, c_dtype):
    n = 3
    ops = [qml.Hadamard(0), qml.CNOT([0, 1]), qml.RY(0.4, 2)]
    h = qml.Hamiltonian([0.5, 2.0, -1.5], [qml.Identity(0), qml.PauliZ(0) @ qml.PauliZ(1), qml.PauliX(2)])
    obs = [h, qml.Identity(1), 3.0 * qml.Identity(2) + qml.PauliZ(2), qml.PauliZ(0) @ qml.Identity(2),
           qml.Hamiltonian([1.0, 1.0], [qml.PauliZ(0), qml.PauliZ(0)])]
    mps = [qml.expval(o) for o in obs] + [qml.var(h)]
    got = as_list(execute(qhybrid_device(device, n, c_dtype), ops, mps), len(mps))
    assert_all_close(got, as_list(default_qubit(ops, mps, n), len(mps)), **tol(c_dtype))


def test_probs_in_observable_eigenbasis(device, c_dtype):
    n = 3
    ops = [qml.RY(0.7, 0), qml.CNOT([0, 1]), qml.RX(0.2, 2)]
    mps = [qml.probs(op=qml.PauliX(0)), qml.probs(op=qml.PauliY(1) @ qml.PauliZ(2))]
    got = as_list(execute(qhybrid_device(device, n, c_dtype), ops, mps), 2)
    assert_all_close(got, as_list(default_qubit(ops, mps, n), 2), **tol(c_dtype))


def test_gradient_with_state_prep_and_hermitian(device, c_dtype):
    n = 3
    vec = np.array([1, 1j, 0, 0, 0.5, 0, 0, 1], dtype=complex)
    vec /= np.linalg.norm(vec)
    herm = np.array([[1, 2 - 1j], [2 + 1j, -0.5]])

    def circuit(x):
        qml.StatePrep(vec, wires=range(n))
        qml.RX(x[0], 0)
        qml.CRY(x[1], [0, 2])
        qml.SingleExcitation(x[2], [1, 2])
        return qml.expval(qml.Hermitian(herm, wires=2) @ qml.PauliZ(0))

    e_ours, e_theirs, g_ours, g_theirs = _both_gradients(device, c_dtype, n, circuit, [0.3, -0.8, 1.1])
    np.testing.assert_allclose(e_ours, e_theirs, **tol(c_dtype))
    np.testing.assert_allclose(g_ours, g_theirs, **_grad_tol(c_dtype))


def test_mid_circuit_state_prep(device, c_dtype):
    """StatePrep / BasisState after other gates (PennyLane decomposes them there)."""
    n = 3
    mps = [qml.state()]
    for prep in (qml.StatePrep(np.array([0.6, 0.8j]), wires=1), qml.BasisState(np.array([1]), wires=1),
                 qml.StatePrep(np.array([0, 1, 0, 0.0]), wires=[2, 0])):
        ops = [qml.Hadamard(0), qml.CNOT([0, 2]), qml.RY(0.4, 1), prep, qml.RX(0.3, 1)]
        got = as_list(execute(qhybrid_device(device, n, c_dtype), ops, mps), 1)
        assert_all_close(got, as_list(default_qubit(ops, mps, n), 1), what=repr(prep), **tol(c_dtype))


@pytest.mark.filterwarnings("ignore:Differentiating with respect to the input parameters")
def test_trainable_hamiltonian_coefficients_with_adjoint(device, c_dtype):
    """Trainable observable coefficients under adjoint: right gate gradients, or a clear error.

    (PennyLane's own devices disagree here; an IndexError from deep inside is not acceptable.)
    """
    from qhybrid.errors import OperationError

    def circuit(x, coeffs):
        qml.RX(x, 0)
        qml.RY(0.4, 1)
        qml.CNOT([0, 1])
        return qml.expval(qml.Hamiltonian(coeffs, [qml.PauliZ(0), qml.PauliX(1)]))

    x, coeffs = pnp.array(0.3, requires_grad=True), pnp.array([0.5, -1.0], requires_grad=True)
    ours = qml.QNode(circuit, qhybrid_device(device, 2, c_dtype), diff_method="adjoint")
    want = qml.grad(qml.QNode(circuit, qml.device("default.qubit", wires=2)))(x, coeffs)
    try:
        got = qml.grad(ours)(x, coeffs)
    except (OperationError, qml.exceptions.DeviceError, qml.exceptions.QuantumFunctionError) as exc:
        assert any(w in str(exc).lower() for w in ("observable", "coefficient", "trainable")), str(exc)
        return
    np.testing.assert_allclose(got[0], want[0], **_grad_tol(c_dtype))
    np.testing.assert_allclose(got[1], want[1], **_grad_tol(c_dtype))


def _non_table_ops(x):
    """Operations outside the engine's gate table (dense blocks or decompositions)."""
    return [qml.U3(x[0], x[1], x[2], wires=0), qml.U2(x[3], 0.4, wires=1), qml.PauliRot(x[4], "XYZ", wires=[0, 2, 3]),
            qml.ctrl(qml.RX(x[5], wires=0), control=[1, 2]), qml.ctrl(qml.Hadamard(3), control=0, control_values=[0]),
            qml.MultiControlledX(wires=[0, 1, 2, 3], control_values=[1, 0, 1]), qml.CH([2, 1]), qml.CCZ([3, 0, 1]),
            qml.ECR([1, 3]), qml.SISWAP([0, 2]), qml.OrbitalRotation(x[6], wires=[0, 1, 2, 3]),
            qml.PCPhase(x[7], dim=3, wires=[1, 2]), qml.QFT(wires=[1, 2, 3]), qml.adjoint(qml.QFT(wires=[0, 3])),
            qml.PSWAP(x[8], wires=[2, 0]), qml.CPhase(x[9], wires=[3, 1]), qml.U1(x[10], wires=2),
            qml.IsingZZ(x[11], wires=[1, 3])]


def test_operations_outside_the_gate_table(device, c_dtype):
    n = 4
    x = np.random.default_rng(31).uniform(-np.pi, np.pi, size=12)
    ops = [qml.Hadamard(w) for w in range(n)] + _non_table_ops(x)
    mps = [qml.state(), qml.expval(qml.PauliX(0) @ qml.PauliY(3))]
    compare(device, c_dtype, ops, mps, n)


def test_gradient_through_operations_outside_the_gate_table(device, c_dtype):
    n = 4

    def circuit(x):
        for w in range(n):
            qml.Hadamard(w)
        for op in _non_table_ops(x):
            qml.apply(op)
        return qml.expval(qml.PauliX(0) @ qml.PauliY(3) + 0.5 * qml.PauliZ(1))

    x = np.random.default_rng(32).uniform(-np.pi, np.pi, size=12)
    e_ours, e_theirs, g_ours, g_theirs = _both_gradients(device, c_dtype, n, circuit, x)
    np.testing.assert_allclose(e_ours, e_theirs, **tol(c_dtype))
    np.testing.assert_allclose(g_ours, g_theirs, **_grad_tol(c_dtype))


def test_gradient_with_custom_wire_labels(device, c_dtype):
    wires = ["q", 3, "anc"]

    def circuit(x):
        qml.RX(x[0], "q")
        qml.IsingXY(x[1], ["anc", 3])
        qml.CRZ(x[2], [3, "q"])
        qml.MultiRZ(x[0], wires=["q", "anc"])
        return qml.expval(qml.PauliX("q") @ qml.PauliZ("anc") + qml.PauliY(3))

    x = pnp.array([0.3, -0.7, 1.2], requires_grad=True)
    ours = qml.QNode(circuit, qhybrid_device(device, wires, c_dtype), diff_method="adjoint")
    theirs = qml.QNode(circuit, qml.device("default.qubit", wires=wires), diff_method="backprop")
    np.testing.assert_allclose(ours(x), theirs(x), **tol(c_dtype))
    np.testing.assert_allclose(qml.grad(ours)(x), qml.grad(theirs)(x), **_grad_tol(c_dtype))
