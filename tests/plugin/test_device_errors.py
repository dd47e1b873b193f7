"""Bad input to qhybrid devices: clear, one-line errors that name the bad value."""
from __future__ import annotations

import numpy as np
import pennylane as qml
import pytest

from crosscheck import DEVICES, execute, qhybrid_device
from qhybrid import errors

try:
    import torch

    HAS_CUDA = torch.cuda.is_available()
except Exception:  # pragma: no cover
    HAS_CUDA = False

# PennyLane's own preprocess errors are acceptable too, as long as the message is clear
OPERATION_ERRORS = (errors.OperationError, qml.exceptions.DeviceError)
WIRE_ERRORS = (errors.WireError, qml.exceptions.WireError)


class Mystery(qml.operation.Operation):
    """An operation with no matrix and no decomposition."""

    num_wires = 1
    num_params = 0


@pytest.mark.parametrize("device", DEVICES)
class TestBadInput:
    def test_unknown_operation_is_named(self, device):
        dev = qhybrid_device(device, 2)
        with pytest.raises(OPERATION_ERRORS, match="Mystery"):
            execute(dev, [qml.Hadamard(0), Mystery(wires=1)], [qml.state()])

    def test_wire_outside_device_is_named(self, device):
        dev = qhybrid_device(device, 3)
        with pytest.raises(WIRE_ERRORS, match="5"):
            execute(dev, [qml.CNOT([0, 5])], [qml.state()])

    def test_measured_wire_outside_device(self, device):
        dev = qhybrid_device(device, 3)
        with pytest.raises(WIRE_ERRORS, match="9"):
            execute(dev, [qml.Hadamard(0)], [qml.expval(qml.PauliZ(9))])

    def test_non_unitary_qubit_unitary(self, device):
        dev = qhybrid_device(device, 2)
        bad = np.array([[1.0, 1.0], [0.0, 1.0]])
        with pytest.raises(errors.OperationError, match="(?i)unitar"):
            execute(dev, [qml.QubitUnitary(bad, wires=0)], [qml.state()])

    def test_too_many_qubits_names_bytes(self, device):
        if device == "qhybrid.gpu" and not HAS_CUDA:
            pytest.skip("needs CUDA")
        with pytest.raises(errors.MemoryLimitError, match="(?i)bytes|[KMGTPE]i?B"):
            dev = qhybrid_device(device, 60)
            execute(dev, [qml.Hadamard(0)], [qml.expval(qml.PauliZ(0))])

    def test_bad_c_dtype(self, device):
        with pytest.raises(errors.DeviceError, match="c_dtype"):
            dev = qhybrid_device(device, 2, c_dtype=np.float32)
            execute(dev, [qml.Hadamard(0)], [qml.state()])

    def test_unknown_option(self, device):
        with pytest.raises((errors.DeviceError, TypeError), match="colour"):
            qhybrid_device(device, 2, colour="blue")


@pytest.mark.skipif(HAS_CUDA, reason="CUDA is present")
def test_gpu_device_without_cuda_is_a_device_error():
    with pytest.raises(errors.DeviceError, match="CUDA"):
        dev = qml.device("qhybrid.gpu", wires=2)
        execute(dev, [qml.Hadamard(0)], [qml.state()])


def test_memory_error_is_also_builtin():
    """MemoryLimitError is a MemoryError, DeviceError a ValueError (the house rule)."""
    assert issubclass(errors.MemoryLimitError, MemoryError)
    assert issubclass(errors.DeviceError, ValueError)
