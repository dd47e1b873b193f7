"""Validation and decomposition for the qhybrid devices: all checks happen here.

``device_pipeline(device, config)`` returns the PennyLane compile pipeline:
wires inside the device, mid-circuit measurements deferred, everything not
in the gate table decomposed (unknown operations are named), unitaries
checked, measurements validated; with finite shots, broadcasts are expanded
(sampling runs one circuit per batch entry); for adjoint / device
derivatives, trainable gates are decomposed to single-parameter gates with
a generator, only expectation values are allowed, and broadcast tapes are
expanded (PennyLane's interfaces expect one Jacobian per scalar parameter;
the engine's own ``adjoint_jacobian`` differentiates whole batches at once).

The pipeline runs at every QNode call on a fresh tape, so its common case is cheap: the wires
are checked from each operation's own wires (``tape.wires`` builds a ``Wires`` per controlled
gate and merges them all, about a millisecond at 14 qubits), the decomposition is skipped when
every operation passes its stopping condition (which answers from the gate's name when it can),
and a tape whose parameters are all scalars is not broadcast (``tape.batch_size`` walks every
parameter through PennyLane's dispatch); anything else goes through PennyLane's own transforms.
"""
from __future__ import annotations

import numpy as np
import pennylane as qml
from pennylane.devices.preprocess import (
    decompose,
    no_sampling,
    validate_adjoint_trainable_params,
    validate_device_wires,
    validate_measurements,
    validate_observables,
)
from pennylane.devices.preprocess import null_postprocessing
from pennylane.measurements import ExpectationMP, SampleMeasurement, StateMeasurement
from pennylane.operation import StatePrepBase
from pennylane.ops import Snapshot
from pennylane.transforms import broadcast_expand, defer_measurements
from pennylane.transforms.core import CompilePipeline, transform

from ..errors import OperationError, WireError
from ..sim.gates import GATES
from .convert import _native, evolution_gates, op_wire_labels

#: Operations with a matrix that run as one dense block when not in the table.
_MATRIX_OK = {"MultiControlledX", "ControlledQubitUnitary", "QFT", "OrbitalRotation", "ECR", "SISWAP",
              "SQISW", "BlockEncode", "QubitCarry", "QubitSum", "PCPhase", "PauliRot", "U2", "U3",
              "CCZ", "CH", "C(PauliX)", "C(PauliY)", "C(PauliZ)", "C(Hadamard)", "C(RX)", "C(RY)",
              "C(RZ)", "C(PhaseShift)", "Controlled", "MultiControlledX", "Adjoint(QFT)"}
_MAX_DENSE_WIRES = 8


def _evolution_ok(op, *, time_trainable: bool) -> bool:
    """An ``ApproxTimeEvolution`` the tape plan runs as table rotations (:mod:`.plan`): every Pauli
    word has a table gate, no coefficient is trainable (they are baked into the plan), and the
    time only when ``time_trainable``. Spares PennyLane's decomposition into hundreds of
    ``PauliRot`` at every call (a QAOA cost layer)."""
    if evolution_gates(op) is None:
        return False
    grads = [qml.math.requires_grad(d) for d in op.data]
    return not any(grads[:-1]) and (time_trainable or not grads[-1])


def supports_operation(op) -> bool:
    """Stopping condition of the decomposition: run natively or as a small dense block."""
    if _native(op) is not None:
        return True
    if op.name == "ApproxTimeEvolution":
        return _evolution_ok(op, time_trainable=False)
    if isinstance(op, StatePrepBase):
        return True
    if op.name in _MATRIX_OK or op.name.startswith(("C(", "Adjoint(")):
        return op.has_matrix and len(op.wires) <= _MAX_DENSE_WIRES
    return False


#: Table gates that pass the adjoint stopping condition whatever their parameters: no
#: parameter, one with a generator, or ``Rot`` (written as RZ RY RZ by the tape plan).
_ADJOINT_OK = frozenset(name for name, g in GATES.items()
                        if g.num_params == 0 or (g.num_params == 1 and g.generator is not None) or name == "Rot")


def supports_adjoint_operation(op) -> bool:
    """Trainable gates must be single-parameter table gates with a generator (``Rot`` too: the
    tape conversion writes it as RZ RY RZ; an ``ApproxTimeEvolution`` with only its time
    trainable)."""
    if op.name in _ADJOINT_OK:
        return True
    if op.name == "ApproxTimeEvolution":
        return _evolution_ok(op, time_trainable=True)
    if not supports_operation(op):
        return False
    if op.num_params == 0 or not any(qml.math.requires_grad(d) for d in op.data) or op.name == "Rot":
        return True
    nat = _native(op)
    return nat is not None and op.num_params == 1 and GATES[nat[0]].generator is not None


def _tape_wire_labels(tape) -> dict:
    """The wire labels of ``tape``'s operations and measurements, in order of appearance (as
    ``tape.wires``, without building its ``Wires``)."""
    labels = {}
    for op in tape.operations:
        labels.update(dict.fromkeys(op_wire_labels(op)))
    for m in tape.measurements:
        labels.update(dict.fromkeys(m.wires.labels))
    return labels


@transform
def validate_wires(tape, wires, name="qhybrid"):
    """Raise qhybrid WireError for wires outside the device; then PennyLane's
    ``validate_device_wires`` where it has work to do (no device wires, a measurement or a
    ``Snapshot`` to be given the device's wires), else the tape as it is."""
    if wires is None:
        return validate_device_wires(tape, wires, name=name)
    allowed = set(wires.labels)
    labels = _tape_wire_labels(tape)
    extra = [w for w in labels if w not in allowed]
    if extra:
        raise WireError(f"{name}: wires {extra} are not on the device; device wires are {list(wires)}")
    if any(not m.obs and not m.wires for m in tape.measurements) or \
            any(isinstance(op, Snapshot) for op in tape.operations):
        return validate_device_wires(tape, wires, name=name)
    return (tape,), null_postprocessing


@transform
def decompose_unsupported(tape, stopping_condition, name="qhybrid", device_wires=None):
    """PennyLane's ``decompose`` (initial state preparation kept) when an operation fails
    ``stopping_condition``, else the tape as it is (``decompose`` counts the work wires first,
    building ``tape.wires``)."""
    ops = tape.operations
    # an initial state preparation is kept, unless it fails the condition (a trainable one under
    # adjoint: decomposed into gates, as lightning.qubit does; a BasisState's X gates have no
    # parameters left to differentiate)
    skip = 1 if ops and isinstance(ops[0], StatePrepBase) and stopping_condition(ops[0]) else 0
    if all(stopping_condition(op) for op in ops[skip:]):
        return (tape,), null_postprocessing
    return decompose(tape, stopping_condition=stopping_condition, name=name, skip_initial_state_prep=bool(skip),
                     device_wires=device_wires)


def _scalar(d) -> bool:
    if type(d) is float:
        return True
    nd = getattr(d, "ndim", None)
    return (qml.math.ndim(d) if nd is None else nd) == 0


@transform
def expand_broadcast(tape):
    """PennyLane's ``broadcast_expand`` when some operation parameter is not a scalar (it may
    carry a batch axis), else the tape as it is: with scalar parameters only, nothing is
    broadcast (a batch axis is one dimension more than the parameter's own)."""
    if all(_scalar(d) for op in tape.operations for d in op.data):
        return (tape,), null_postprocessing
    return broadcast_expand(tape)


@transform
def validate_unitaries(tape, atol=1e-6):
    """Raise OperationError for a QubitUnitary that is not unitary."""
    for op in tape.operations:
        if op.name == "QubitUnitary":
            u = qml.math.toarray(qml.math.unwrap(op.data[0]))
            d = u.shape[-1]
            err = np.max(np.abs(np.einsum("...ij,...kj->...ik", u, u.conj()) - np.eye(d)))
            if err > atol:
                raise OperationError(
                    f"QubitUnitary on wires {list(op.wires)} is not unitary (max |U U^dagger - I| = {err:.2e}, "
                    f"tolerance {atol}); pass a unitary matrix, e.g. from scipy.linalg.expm(1j * H)"
                )
    return (tape,), lambda r: r[0]


def _scalar_parameters(tape) -> bool:
    """Whether every operation parameter of ``tape`` is a scalar: then nothing is broadcast,
    known without ``tape.batch_size`` (which walks each parameter through PennyLane's dispatch,
    ~3 ms for 150 gates)."""
    for op in tape.operations:
        for p in op.data:
            if not isinstance(p, (int, float, complex)) and getattr(p, "ndim", None) != 0:
                return False
    return True


@transform
def expand_broadcast_if_shots(tape):
    """Sampling runs one circuit per broadcast entry."""
    if tape.shots and not _scalar_parameters(tape) and tape.batch_size is not None:
        return broadcast_expand(tape)
    return (tape,), lambda r: r[0]


@transform
def expvals_only(tape, name="qhybrid"):
    """Adjoint derivatives on qhybrid need expectation values only."""
    bad = [type(m).__name__ for m in tape.measurements if not isinstance(m, ExpectationMP)]
    if bad:
        raise qml.exceptions.DeviceError(
            f"{name}: adjoint differentiation supports expval measurements only, got {bad}; "
            f"use diff_method='parameter-shift' for other measurements"
        )
    return (tape,), lambda r: r[0]


def _analytic_ok(m) -> bool:
    return isinstance(m, StateMeasurement)


def _sample_ok(m) -> bool:
    if not isinstance(m, SampleMeasurement):
        return False
    return m.obs is None or _diagonalizable(m.obs)


def _diagonalizable(obs) -> bool:
    if isinstance(obs, qml.ops.CompositeOp):
        return all(_diagonalizable(o) for o in obs.operands)
    if isinstance(obs, qml.ops.SymbolicOp):
        return _diagonalizable(obs.base)
    return obs.has_diagonalizing_gates


def device_pipeline(device, config) -> CompilePipeline:
    """The compile pipeline of ``device`` for ``config`` (see module docstring)."""
    name = device.name
    prog = CompilePipeline()
    prog.add_transform(validate_wires, device.wires, name=name)
    if qml.capture.enabled():  # (a tape under capture: the wire count for the measurement wires)
        prog.add_transform(defer_measurements, num_wires=_capture_wires(device), allow_postselect=False)
    else:
        prog.add_transform(defer_measurements, allow_postselect=False)
    adjoint = config.gradient_method in ("adjoint", "device")
    # one decomposition pass: with adjoint, straight to single-parameter trainable gates
    prog.add_transform(decompose_unsupported, supports_adjoint_operation if adjoint else supports_operation,
                       name=name, device_wires=device.wires)
    prog.add_transform(validate_unitaries)
    prog.add_transform(validate_measurements, analytic_measurements=_analytic_ok,
                       sample_measurements=_sample_ok, name=name)
    prog.add_transform(expand_broadcast_if_shots)
    if adjoint:
        add_adjoint_transforms(prog, name=name, device_wires=device.wires, decomposed=True)
    return prog


def _capture_wires(device) -> int:
    """The device's wire count, which ``defer_measurements`` needs under program capture (as on
    lightning.qubit, whose mid-circuit measurements then use the device's spare wires)."""
    if device.wires is None:
        raise WireError(f"{device.name} needs wires=... when qml.capture is enabled (defer_measurements "
                        f"maps mid-circuit measurements onto the device's spare wires)")
    return len(device.wires)


def add_adjoint_transforms(prog, *, name, device_wires=None, decomposed=False):
    """The adjoint-specific checks (also used by ``supports_derivatives``)."""
    prog.add_transform(no_sampling, name=f"adjoint + {name}")
    if not decomposed:
        prog.add_transform(decompose_unsupported, supports_adjoint_operation, name=f"adjoint + {name}",
                           device_wires=device_wires)
    prog.add_transform(validate_observables, lambda o: o.pauli_rep is not None or o.has_matrix,
                       name=f"adjoint + {name}")
    prog.add_transform(expvals_only, name=name)
    # PennyLane's ML interfaces pair device Jacobians with scalar parameters, so a QNode's
    # broadcast tape is expanded here; the engine's adjoint_jacobian itself is batched.
    prog.add_transform(expand_broadcast)
    prog.add_transform(validate_adjoint_trainable_params)
