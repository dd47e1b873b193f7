"""The device pipeline's cheap common case (plugin/preprocess.py): a tape with nothing to do
passes through each transform unchanged (the same object, ``tape.wires`` and ``tape.batch_size``
never built), and anything else gets exactly what PennyLane's own transform gives."""
from __future__ import annotations

import numpy as np
import pennylane as qml
import pytest
from pennylane import numpy as pnp
from pennylane.devices.preprocess import decompose, validate_device_wires
from pennylane.operation import _UNSET_BATCH_SIZE
from pennylane.transforms import broadcast_expand

from qhybrid.errors import WireError
from qhybrid.plugin.preprocess import (
    _ADJOINT_OK,
    decompose_unsupported,
    expand_broadcast,
    supports_adjoint_operation,
    supports_operation,
    validate_wires,
)


def _layered(n=3, x=0.3):
    ops = [g(x, w) for w in range(n) for g in (qml.RX, qml.RY, qml.RZ)] + [qml.CNOT([w, (w + 1) % n]) for w in range(n)]
    return qml.tape.QuantumScript(ops, [qml.expval(qml.Z(0))])


def _untouched(transform, tape, *args, **kwargs):
    (out,), post = transform(tape, *args, **kwargs)
    return out is tape and post(["r"]) == "r"


def test_plain_tape_passes_every_transform_untouched():
    tape = _layered()
    wires = qml.wires.Wires(range(3))
    assert _untouched(validate_wires, tape, wires, name="qhybrid.cpu")
    assert _untouched(decompose_unsupported, tape, supports_adjoint_operation, device_wires=wires)
    assert _untouched(expand_broadcast, tape)
    assert "wires" not in tape.__dict__ and tape._batch_size is _UNSET_BATCH_SIZE  # neither was computed


def test_wires_outside_the_device_are_named():
    tape = _layered(4)
    with pytest.raises(WireError, match=r"wires \[3\] are not on the device"):
        validate_wires(tape, qml.wires.Wires(range(3)), name="qhybrid.cpu")


@pytest.mark.parametrize("mp", [qml.probs(), qml.state()])
def test_measurements_without_wires_get_the_device_wires(mp):
    tape = qml.tape.QuantumScript([qml.RX(0.1, 0)], [mp])
    wires = qml.wires.Wires(["a", 0, 2])
    (ours,), _ = validate_wires(tape, wires)
    (theirs,), _ = validate_device_wires(tape, wires)
    assert ours.measurements[0].wires == theirs.measurements[0].wires == wires


def test_no_device_wires_defers_to_pennylane():
    tape = _layered()
    (out,), _ = validate_wires(tape, None)
    assert out.wires == tape.wires


def test_unsupported_operations_are_decomposed_as_pennylane_does():
    w = pnp.array(np.full((1, 3), 0.4), requires_grad=True)
    tape = qml.tape.QuantumScript([qml.StatePrep(np.ones(8) / np.sqrt(8), wires=range(3)),
                                   qml.BasicEntanglerLayers(w, wires=range(3))], [qml.expval(qml.Z(0))])
    (ours,), _ = decompose_unsupported(tape, supports_adjoint_operation, device_wires=qml.wires.Wires(range(3)))
    (theirs,), _ = decompose(tape, supports_adjoint_operation, skip_initial_state_prep=True,
                             device_wires=qml.wires.Wires(range(3)))
    assert [op.name for op in ours.operations] == [op.name for op in theirs.operations]
    assert ours.operations[0].name == "StatePrep" and len(ours.operations) == 7


def test_broadcast_tape_is_expanded_as_pennylane_does():
    tape = qml.tape.QuantumScript([qml.RX(np.array([0.1, 0.2]), 0), qml.RY(0.3, 0)], [qml.expval(qml.Z(0))])
    ours, post = expand_broadcast(tape)
    theirs, _ = broadcast_expand(tape)
    assert len(ours) == len(theirs) == 2
    assert [t.operations[0].data[0] for t in ours] == [t.operations[0].data[0] for t in theirs]
    assert np.allclose(post([1.0, 2.0]), [1.0, 2.0])


def test_matrix_parameters_are_not_mistaken_for_a_batch():
    """A QubitUnitary's matrix is not a scalar: the check defers to PennyLane, which finds no batch."""
    tape = qml.tape.QuantumScript([qml.QubitUnitary(np.eye(2), 0)], [qml.expval(qml.Z(0))])
    (out,), _ = expand_broadcast(tape)
    assert out.batch_size is None


@pytest.mark.parametrize("trainable", [False, True])
def test_name_shortcut_agrees_with_the_full_condition(trainable):
    """Every gate the adjoint condition accepts by name is accepted by the full check too."""
    x = pnp.array(0.3, requires_grad=trainable)
    for op in (qml.RX(x, 0), qml.IsingZZ(x, [0, 1]), qml.CNOT([0, 1]), qml.Hadamard(0), qml.Rot(x, x, x, 0)):
        assert op.name in _ADJOINT_OK and supports_adjoint_operation(op) and supports_operation(op)
    u = qml.QubitUnitary(pnp.array(np.eye(2), requires_grad=trainable), 0)
    assert u.name not in _ADJOINT_OK and supports_adjoint_operation(u) is (not trainable)
