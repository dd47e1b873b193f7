"""The qhybrid.cpu / qhybrid.gpu PennyLane devices against default.qubit."""
from __future__ import annotations

import numpy as np
import pennylane as qml
import pytest
import torch
from pennylane import numpy as pnp

from qhybrid import errors
from qhybrid.plugin.device import QhybridCPU


def _circuit(x, n):
    for w in range(n):
        qml.Hadamard(w)
    qml.RX(x[0], 0)
    qml.Rot(x[1], x[2], x[0], wires=1)
    qml.CNOT([0, 1])
    qml.IsingZZ(x[1], [1, 2])
    qml.CRY(x[2], [2, 0])
    qml.MultiRZ(x[0], [0, 1, 2])
    qml.PSWAP(0.3, [0, 2])
    qml.QFT(wires=[0, 1])
    qml.adjoint(qml.S(2))
    qml.MultiControlledX(wires=[0, 1, 2])


H = qml.Hamiltonian([0.4, -0.3, 0.2, 0.7], [qml.Z(0) @ qml.Z(1), qml.X(2), qml.Y(0) @ qml.Z(2), qml.Z(1)])


def _qnodes(name, diff_method, **kw):
    dev = qml.device(name, wires=3, **kw)

    @qml.qnode(dev, diff_method=diff_method)
    def f(x):
        _circuit(x, 3)
        return qml.expval(H), qml.expval(qml.Hermitian(np.diag([1.0, 2, 3, 4]), [0, 2])), qml.expval(qml.Y(1))

    @qml.qnode(dev)
    def g(x):
        _circuit(x, 3)
        return qml.probs(wires=[2, 0]), qml.var(H), qml.state(), qml.expval(qml.Projector([1], [1]))

    return f, g


X = pnp.array([0.3, -0.8, 1.1], requires_grad=True)


def test_results_match_default_qubit():
    f, g = _qnodes("qhybrid.cpu", "adjoint")
    fr, gr = _qnodes("default.qubit", "backprop")
    for a, b in zip(f(X), fr(X)):
        np.testing.assert_allclose(a, b, atol=1e-10)
    for a, b in zip(g(X), gr(X)):
        np.testing.assert_allclose(a, b, atol=1e-10)


@pytest.mark.parametrize("method", ["adjoint", "device"])
def test_device_gradients_match_default_qubit(method):
    f, _ = _qnodes("qhybrid.cpu", method)
    fr, _ = _qnodes("default.qubit", "backprop")
    jac = qml.jacobian(lambda x: qml.math.stack(f(x)))(X)
    ref = qml.jacobian(lambda x: qml.math.stack(fr(x)))(X)
    np.testing.assert_allclose(jac, ref, atol=1e-10)


def test_complex64_within_1e_5():
    f, _ = _qnodes("qhybrid.cpu", "adjoint", c_dtype="complex64")
    fr, _ = _qnodes("qhybrid.cpu", "adjoint")
    np.testing.assert_allclose(np.array(f(X)), np.array(fr(X)), atol=1e-5)
    assert qml.device("qhybrid.cpu", wires=1, c_dtype=np.complex64).c_dtype is np.complex64


def test_broadcast_results_and_adjoint_gradient():
    dev = qml.device("qhybrid.cpu", wires=2)

    @qml.qnode(dev, diff_method="adjoint")
    def f(x, y):
        qml.RX(x, 0)
        qml.RY(y, 1)
        qml.CNOT([0, 1])
        return qml.expval(qml.Z(1) + 0.5 * qml.X(0))

    x = pnp.array([0.1, 0.5, 0.9], requires_grad=True)
    y = pnp.array(0.3, requires_grad=True)
    val = f(x, y)
    want = np.cos(x) * np.cos(0.3)
    np.testing.assert_allclose(val, want, atol=1e-12)
    jx = qml.jacobian(lambda x: f(x, y))(x)
    np.testing.assert_allclose(np.diag(jx), -np.sin(x) * np.cos(0.3), atol=1e-10)


def test_shots_are_seeded_and_match_within_noise():
    def run(seed):
        dev = qml.device("qhybrid.cpu", wires=2, seed=seed)

        @qml.set_shots(4000)
        @qml.qnode(dev)
        def f():
            qml.Hadamard(0)
            qml.CNOT([0, 1])
            qml.RY(0.4, 1)
            return qml.sample(wires=[0, 1]), qml.counts(qml.Z(0)), qml.expval(qml.X(1))

        return f()

    a, b, c = run(11), run(11), run(np.random.default_rng(11))
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[0], c[0])
    assert a[0].shape == (4000, 2)
    assert abs(a[2] - np.sin(0.4) * 0) < 0.1
    assert run(torch.Generator().manual_seed(3))[0].shape == (4000, 2)


def test_unknown_operation_is_named():
    class Mystery(qml.operation.Operation):
        num_wires = 1

    dev = qml.device("qhybrid.cpu", wires=1)
    tape = qml.tape.QuantumScript([Mystery(wires=0)], [qml.expval(qml.Z(0))])
    with pytest.raises(qml.exceptions.DeviceError, match="Mystery"):
        qml.execute([tape], dev)


def test_wires_outside_the_device():
    dev = qml.device("qhybrid.cpu", wires=2)
    tape = qml.tape.QuantumScript([qml.Hadamard(5)], [qml.expval(qml.Z(0))])
    with pytest.raises(errors.WireError, match=r"\[5\]"):
        qml.execute([tape], dev)


def test_non_unitary_qubit_unitary():
    dev = qml.device("qhybrid.cpu", wires=1)
    tape = qml.tape.QuantumScript([qml.QubitUnitary(np.array([[1, 1], [0, 1]]), 0)], [qml.state()])
    with pytest.raises(errors.OperationError, match="not unitary"):
        qml.execute([tape], dev)


def test_too_many_qubits_for_memory():
    dev = qml.device("qhybrid.cpu", wires=60)
    tape = qml.tape.QuantumScript([qml.Hadamard(0)], [qml.expval(qml.Z(0))])
    with pytest.raises(errors.MemoryLimitError, match="available"):
        qml.execute([tape], dev)


def test_bad_options():
    with pytest.raises(errors.DeviceError, match="c_dtype"):
        qml.device("qhybrid.cpu", wires=1, c_dtype=np.float32)
    with pytest.raises(errors.DeviceError, match="threads"):
        qml.device("qhybrid.cpu", wires=1, threads=0)


def test_threads_option_is_scoped():
    before = torch.get_num_threads()
    dev = qml.device("qhybrid.cpu", wires=2, threads=1)

    @qml.qnode(dev)
    def f():
        qml.Hadamard(0)
        return qml.expval(qml.X(0))

    np.testing.assert_allclose(f(), 1.0)
    assert torch.get_num_threads() == before


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-CUDA error")
def test_gpu_without_cuda_raises():
    with pytest.raises(errors.DeviceError, match="CUDA"):
        qml.device("qhybrid.gpu", wires=2)


@pytest.mark.cuda
def test_gpu_matches_cpu():
    f, g = _qnodes("qhybrid.gpu", "adjoint")
    fc, gc = _qnodes("qhybrid.cpu", "adjoint")
    np.testing.assert_allclose(np.array(f(X)), np.array(fc(X)), atol=1e-10)


def test_supports_derivatives():
    dev = QhybridCPU(wires=2)
    cfg = qml.devices.ExecutionConfig(gradient_method="adjoint")
    assert dev.supports_derivatives(cfg)
    assert not dev.supports_derivatives(qml.devices.ExecutionConfig(gradient_method="backprop"))
    tape = qml.tape.QuantumScript([qml.RX(0.1, 0)], [qml.probs()], shots=10)
    assert not dev.supports_derivatives(cfg, tape)


def test_torch_reference_path_matches():
    """fast=False, fuse=False is the code path qhybrid.gpu runs (torch kernels only)."""
    f, g = _qnodes("qhybrid.cpu", "adjoint", fast=False, fuse=False)
    fr, gr = _qnodes("qhybrid.cpu", "adjoint")
    np.testing.assert_allclose(np.array(f(X)), np.array(fr(X)), atol=1e-10)
    jac = qml.jacobian(lambda x: qml.math.stack(f(x)))(X)
    ref = qml.jacobian(lambda x: qml.math.stack(fr(x)))(X)
    np.testing.assert_allclose(jac, ref, atol=1e-10)
    for a, b in zip(g(X), gr(X)):
        np.testing.assert_allclose(a, b, atol=1e-10)
