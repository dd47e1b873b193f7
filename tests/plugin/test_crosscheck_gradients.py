"""Adjoint gradients of qhybrid devices against default.qubit (backprop and parameter-shift)."""
from __future__ import annotations

import numpy as np
import pennylane as qml
import pytest
from pennylane import numpy as pnp

from crosscheck import DEVICES, DTYPES, qhybrid_device, tol
from random_circuits import (PARAMETRIC, GATES, Gate, build, random_circuit, random_gate,
                             random_hamiltonian, random_observables)

# default.qubit's autograd backprop (the peer) casts complex cotangents to real; values are compared
_PEER_NOISE = "ignore:Casting complex values to real:numpy.exceptions.ComplexWarning"
pytestmark = [pytest.mark.parametrize("device", DEVICES),
              pytest.mark.parametrize("c_dtype", DTYPES),
              pytest.mark.filterwarnings(_PEER_NOISE)]


def _stacked(qnode):
    def f(x):
        result = qnode(x)
        return qml.math.stack(result) if isinstance(result, tuple) else result

    return f


def _jacobians(device, c_dtype, n_wires, circuit, params, *, peer="backprop"):
    """Jacobian of ``circuit(params)`` by qhybrid's adjoint and by default.qubit's ``peer``.

    Several measurements are stacked into one array (autograd needs one output).
    """
    dev = qhybrid_device(device, n_wires, c_dtype)
    ours = qml.QNode(circuit, dev, diff_method="adjoint")
    theirs = qml.QNode(circuit, qml.device("default.qubit", wires=n_wires), diff_method=peer)
    x = pnp.array(params, requires_grad=True)
    ours, theirs = _stacked(ours), _stacked(theirs)
    return (qml.jacobian(ours)(x), qml.jacobian(theirs)(x), ours(x), theirs(x))


def _grad_tol(c_dtype):
    """Gradients are held to the same tolerance as values."""
    return tol(c_dtype)


def _circuit(spec, *observables):
    """A QNode function: the gates of ``spec`` with parameters ``x``, then ``expval`` of each
    observable (a tuple when there are several)."""

    def circuit(x):
        for op in build(spec, x):
            qml.apply(op)
        values = tuple(qml.expval(o) for o in observables)
        return values if len(values) > 1 else values[0]

    return circuit


@pytest.mark.parametrize("seed", range(5))
def test_adjoint_gradient_of_random_circuit(device, c_dtype, seed):
    rng = np.random.default_rng(1000 + seed)
    n = 3 + seed % 3
    spec, params = random_circuit(rng, n_wires=n, depth=40)
    h = random_hamiltonian(rng, n, terms=10)

    circuit = _circuit(spec, h)

    ours, theirs, f_ours, f_theirs = _jacobians(device, c_dtype, n, circuit, params)
    np.testing.assert_allclose(f_ours, f_theirs, **tol(c_dtype))
    np.testing.assert_allclose(ours, theirs, **_grad_tol(c_dtype))


@pytest.mark.parametrize("name", PARAMETRIC)
def test_adjoint_gradient_each_parametric_gate(device, c_dtype, name):
    """Each parametrized gate (and its adjoint) twice, against parameter-shift."""
    rng = np.random.default_rng(len(name) * 7919 + GATES[name][1])
    n = 4
    spec = [Gate("RY", (w,), 1) for w in range(n)] + [Gate("CNOT", (0, 1)), Gate("CNOT", (2, 3))]
    spec += [random_gate(rng, name, n), Gate("Hadamard", (1,))]
    g = random_gate(rng, name, n)
    spec.append(Gate(g.name, g.wires, g.n_params, g.matrix, adjoint=True))
    params = rng.uniform(-np.pi, np.pi, size=sum(x.n_params for x in spec))
    obs = random_observables(np.random.default_rng(5), n)

    circuit = _circuit(spec, obs["hamiltonian"], obs["hermitian"])

    ours, theirs, _, _ = _jacobians(device, c_dtype, n, circuit, params, peer="parameter-shift")
    np.testing.assert_allclose(ours, theirs, err_msg=name, **_grad_tol(c_dtype))


def test_adjoint_jacobian_of_several_observables(device, c_dtype):
    rng = np.random.default_rng(1100)
    n = 5
    spec, params = random_circuit(rng, n_wires=n, depth=50)
    obs = random_observables(rng, n)
    names = ["pauli_word", "all_z", "z_hamiltonian", "hermitian", "prod", "sum", "sprod",
             "projector_basis"]

    circuit = _circuit(spec, *(obs[k] for k in names))

    ours, theirs, f_ours, f_theirs = _jacobians(device, c_dtype, n, circuit, params)
    np.testing.assert_allclose(f_ours, f_theirs, **tol(c_dtype))
    np.testing.assert_allclose(ours, theirs, **_grad_tol(c_dtype))


def test_adjoint_gradient_broadcast(device, c_dtype):
    """A batch of 3 parameter vectors: forward values and the (B, P, B) Jacobian."""
    rng = np.random.default_rng(1200)
    n = 4
    spec, params = random_circuit(rng, n_wires=n, depth=30, batch=3)
    h = random_hamiltonian(rng, n, terms=8)

    circuit = _circuit(spec, h)

    ours, theirs, f_ours, f_theirs = _jacobians(device, c_dtype, n, circuit, params)
    assert np.shape(f_ours) == (3,)
    np.testing.assert_allclose(f_ours, f_theirs, **tol(c_dtype))
    np.testing.assert_allclose(ours, theirs, **_grad_tol(c_dtype))


def test_adjoint_gradient_torch_interface(device, c_dtype):
    """The same gradient through the torch interface (what qhybrid.qml layers use)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1300)
    n = 4
    spec, params = random_circuit(rng, n_wires=n, depth=30)
    h = random_hamiltonian(rng, n, terms=6)

    circuit = _circuit(spec, h)

    grads = []
    for dev, method in ((qhybrid_device(device, n, c_dtype), "adjoint"),
                        (qml.device("default.qubit", wires=n), "backprop")):
        x = torch.tensor(params, dtype=torch.float64, requires_grad=True)
        qml.QNode(circuit, dev, interface="torch", diff_method=method)(x).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], **_grad_tol(c_dtype))


def test_adjoint_gradient_trainable_subset(device, c_dtype):
    """Only some parameters trainable; the others are constants inside the circuit."""
    n = 3

    def circuit(a, b):
        qml.RX(a, 0)
        qml.IsingXX(0.4, [0, 1])
        qml.CRY(b, [1, 2])
        qml.PhaseShift(0.3, 2)
        qml.Rot(a, 0.2, b, 1)
        return qml.expval(qml.PauliY(1) @ qml.PauliZ(2))

    dev = qhybrid_device(device, n, c_dtype)
    a, b = pnp.array(0.7, requires_grad=True), pnp.array(-0.4, requires_grad=False)
    ours = qml.grad(qml.QNode(circuit, dev, diff_method="adjoint"))(a, b)
    theirs = qml.grad(qml.QNode(circuit, qml.device("default.qubit", wires=n)))(a, b)
    np.testing.assert_allclose(ours, theirs, **_grad_tol(c_dtype))


def test_adjoint_gradient_strongly_entangling_rot_layers(device, c_dtype):
    """Rot gates (written as RZ RY RZ by the tape conversion, fused back by the engine) in
    StronglyEntanglingLayers, beside an Adjoint(Rot) and a broadcast Rot."""
    rng = np.random.default_rng(77)
    n = 5
    shape = qml.StronglyEntanglingLayers.shape(n_layers=2, n_wires=n)
    weights = rng.uniform(0, 2 * np.pi, size=shape)

    def circuit(w, a):
        qml.StronglyEntanglingLayers(w, wires=range(n))
        qml.adjoint(qml.Rot(a[0], a[1], a[2], wires=2))
        qml.Rot(a[2], 0.3, a[0], wires=4)
        return qml.expval(qml.PauliZ(0) @ qml.PauliX(2) + 0.5 * qml.PauliY(4))

    a = rng.uniform(-1, 1, size=3)
    ours = qml.jacobian(qml.QNode(circuit, qhybrid_device(device, n, c_dtype), diff_method="adjoint"))(
        pnp.array(weights, requires_grad=True), pnp.array(a, requires_grad=True))
    theirs = qml.jacobian(qml.QNode(circuit, qml.device("default.qubit", wires=n), diff_method="backprop"))(
        pnp.array(weights, requires_grad=True), pnp.array(a, requires_grad=True))
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, **_grad_tol(c_dtype))

    def broadcast(x):
        qml.Hadamard(0)
        qml.Rot(x, 0.4, 2 * x, wires=0)
        qml.CNOT([0, 1])
        qml.Rot(0.1, x, -x, wires=1)
        return qml.expval(qml.PauliZ(1))

    x = pnp.array([0.2, -0.7, 1.3], requires_grad=True)
    ours = qml.jacobian(qml.QNode(broadcast, qhybrid_device(device, 2, c_dtype), diff_method="adjoint"))(x)
    theirs = qml.jacobian(qml.QNode(broadcast, qml.device("default.qubit", wires=2), diff_method="backprop"))(x)
    np.testing.assert_allclose(ours, theirs, **_grad_tol(c_dtype))
