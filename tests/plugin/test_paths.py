"""How qhybrid.cpu runs a circuit: numpy alone for small ones, the engine for large ones, and the
switch to the engine for a program that keeps running circuits of SWITCH_WIRES wires or more."""
import numpy as np
import pennylane as qml
import pytest

from qhybrid.errors import DeviceError
from qhybrid.plugin import paths


def _qnode(dev, n):
    @qml.qnode(dev, diff_method="adjoint")
    def f(x):
        for w in range(n):
            qml.RY(x[w], w)
        for w in range(n - 1):
            qml.CNOT([w, w + 1])
        return qml.expval(qml.Z(0) @ qml.Z(n - 1) + 0.3 * qml.X(1))

    return f


def test_long_programs_move_to_the_engine_with_the_same_numbers(monkeypatch):
    n = paths.SWITCH_WIRES
    monkeypatch.setattr(paths, "SWITCH_SECONDS", 1e-9)
    dev = qml.device("qhybrid.cpu", wires=n)
    f = _qnode(dev, n)
    x = qml.numpy.array(np.linspace(0.1, 0.9, n), requires_grad=True)
    assert dev._path(n) is dev._numpy_path
    first = f(x)  # on numpy: its time passes SWITCH_SECONDS
    assert dev._engine_cache is None  # the engine never ran
    assert dev._path(n) is dev._numpy_path  # (switched as the next batch starts)
    np.testing.assert_allclose(f(x), first, atol=1e-12)
    assert dev._path(n) is dev._engine_path and dev._path(n - 1) is dev._numpy_path
    assert dev._engine_cache is not None  # the engine ran
    fresh = qml.device("qhybrid.cpu", wires=n)  # its first batch on numpy
    np.testing.assert_allclose(qml.jacobian(f)(x), qml.jacobian(_qnode(fresh, n))(x), atol=1e-12)
    assert fresh._engine_cache is None


def test_small_wires_zero_runs_the_engine_and_bad_values_are_named():
    dev = qml.device("qhybrid.cpu", wires=2, small_wires=0)
    assert dev._path(2) is dev._engine_path
    slow = qml.device("qhybrid.cpu", wires=2, fast=False)  # the torch reference, asked for by name
    assert slow._path(2) is slow._engine_path
    for bad in (-1, 1.5, True):
        with pytest.raises(DeviceError, match="small_wires="):
            qml.device("qhybrid.cpu", wires=2, small_wires=bad)


@pytest.mark.parametrize("small_wires", [14, 0], ids=["numpy", "engine"])
def test_threads_are_set_only_when_the_engine_runs(monkeypatch, small_wires):
    """``threads=`` sets torch's and numba's counts (sim.jit.threads) around engine work only, for
    executions, derivatives and device VJPs alike; a batch on numpy never loads them."""
    import contextlib

    from qhybrid.sim import jit

    entered = []

    @contextlib.contextmanager
    def recording(n, **kwargs):
        entered.append(n)
        yield

    monkeypatch.setattr(jit, "threads", recording)
    dev = qml.device("qhybrid.cpu", wires=3, threads=1, small_wires=small_wires)
    x = qml.numpy.array([0.1, 0.2, 0.3], requires_grad=True)
    f = _qnode(dev, 3)
    g = qml.QNode(f.func, dev, diff_method="adjoint", device_vjp=True)
    f(x), qml.grad(f)(x), qml.grad(g)(x)
    assert entered == ([] if small_wires else [1] * len(entered)) and (small_wires or len(entered) >= 3)
