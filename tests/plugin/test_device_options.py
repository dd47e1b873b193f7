"""qhybrid.cpu takes lightning.qubit's options and device VJPs, and declares its capabilities."""
import numpy as np
import pennylane as qml
import pytest
import torch

from qhybrid.errors import DeviceError
from qhybrid.plugin.preprocess import supports_operation
from qhybrid.sim.gates import GATES


def _circuit(x):
    qml.RX(x[0], 0)
    qml.RY(x[1], 1)
    qml.CNOT([0, 1])
    qml.RZ(x[2], 2)
    qml.CNOT([1, 2])
    qml.RY(x[0] * x[2], 2)
    return qml.expval(qml.Z(1)), qml.expval(qml.X(2) @ qml.Z(0))


@pytest.mark.parametrize("options", [dict(batch_obs=True), dict(mcmc=True, kernel_name="Local", num_burnin=10),
                                     dict(mcmc=True, kernel_name="NonZeroRandom", num_burnin=5), dict(num_burnin=0)])
def test_lightning_options_accepted(options):
    dev = qml.device("qhybrid.cpu", wires=3, **options)
    ref = qml.device("lightning.qubit", wires=3, **options)
    x = np.array([0.3, 0.5, 0.7])
    np.testing.assert_allclose(qml.QNode(_circuit, dev)(x), qml.QNode(_circuit, ref)(x), atol=1e-7)


@pytest.mark.parametrize("options,word", [(dict(mcmc=True, kernel_name="Global"), "kernel_name"),
                                          (dict(num_burnin=-1), "num_burnin"),
                                          (dict(mcmc=True, kernel_name="Local", num_burnin=0), "num_burnin"),
                                          (dict(mcmc=True, kernel_name="Local", num_burnin=100, shots=50), "num_burnin")])
def test_bad_mcmc_options_raise(options, word):
    with pytest.raises(DeviceError, match=word):
        qml.device("qhybrid.cpu", wires=2, **options)


@pytest.mark.parametrize("interface", ["torch", "autograd"])
def test_device_vjp_matches_adjoint_jacobian(interface):
    dev = qml.device("qhybrid.cpu", wires=3)
    vjp = qml.QNode(_circuit, dev, diff_method="adjoint", device_vjp=True, interface=interface)
    ref = qml.QNode(_circuit, qml.device("lightning.qubit", wires=3), diff_method="adjoint", interface=interface)
    x0 = [0.3, 0.5, 0.7]
    if interface == "torch":
        grads = []
        for q in (vjp, ref):
            x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
            a, b = q(x)
            (2 * a + 3 * b).backward()
            grads.append(x.grad.numpy())
    else:
        grads = [qml.grad(lambda x, q=q: 2 * q(x)[0] + 3 * q(x)[1])(qml.numpy.array(x0, requires_grad=True))
                 for q in (vjp, ref)]
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-7)


def test_device_vjp_reuses_the_forward_state():
    """The VJP's sweep starts from the state the forward execution kept (no second forward)."""
    dev = qml.device("qhybrid.cpu", wires=3)
    q = qml.QNode(_circuit, dev, diff_method="adjoint", device_vjp=True, interface="torch")
    x = torch.tensor([0.3, 0.5, 0.7], dtype=torch.float64, requires_grad=True)
    a, b = q(x)
    assert dev._saved is not None and len(dev._saved) == 1
    (a + b).backward()
    assert dev._saved is None


def test_device_vjp_needs_a_device_gradient():
    dev = qml.device("qhybrid.cpu", wires=3)
    q = qml.QNode(_circuit, dev, diff_method="parameter-shift", device_vjp=True)
    with pytest.raises(Exception, match="device_vjp"):
        qml.grad(lambda x: q(x)[0])(qml.numpy.array([0.3, 0.5, 0.7], requires_grad=True))


def test_capabilities_declared_the_pennylane_way():
    caps = qml.device("qhybrid.cpu", wires=2).capabilities
    assert caps is not None and caps.supported_mcm_methods == ["deferred"]
    for name in GATES:
        assert name in caps.operations, name
    trainable = {k for k, g in GATES.items() if g.generator is not None}
    for name, op in caps.operations.items():
        if op.differentiable:
            assert name in trainable | {"Rot"}, name
    # every declared matrix-only operation is one the preprocess keeps as a dense block
    op = qml.ISWAP(wires=[0, 1]) if "ISWAP" in caps.operations else None
    assert op is None or supports_operation(op)
    assert {"ExpectationMP", "SampleMP", "StateMP"} <= set(caps.measurement_processes)
