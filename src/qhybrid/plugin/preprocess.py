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
from pennylane.measurements import ExpectationMP, SampleMeasurement, StateMeasurement
from pennylane.operation import StatePrepBase
from pennylane.transforms import broadcast_expand, defer_measurements
from pennylane.transforms.core import CompilePipeline, transform

from ..errors import OperationError, WireError
from ..sim.gates import GATES
from .convert import _native
from .plan import evolution_gates

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


def supports_adjoint_operation(op) -> bool:
    """Trainable gates must be single-parameter table gates with a generator (``Rot`` too: the
    tape conversion writes it as RZ RY RZ; an ``ApproxTimeEvolution`` with only its time
    trainable)."""
    if op.name == "ApproxTimeEvolution":
        return _evolution_ok(op, time_trainable=True)
    if not supports_operation(op):
        return False
    if op.num_params == 0 or not any(qml.math.requires_grad(d) for d in op.data) or op.name == "Rot":
        return True
    nat = _native(op)
    return nat is not None and op.num_params == 1 and GATES[nat[0]].generator is not None


@transform
def validate_wires_inside(tape, wires, name="qhybrid"):
    """Raise qhybrid WireError for wires outside the device."""
    if wires is not None:
        extra = [w for w in tape.wires if w not in wires]
        if extra:
            raise WireError(f"{name}: wires {extra} are not on the device; device wires are {list(wires)}")
    return (tape,), lambda r: r[0]


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


@transform
def expand_broadcast_if_shots(tape):
    """Sampling runs one circuit per broadcast entry."""
    if tape.shots and tape.batch_size is not None:
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
    prog.add_transform(validate_wires_inside, device.wires, name=name)
    prog.add_transform(validate_device_wires, device.wires, name=name)
    prog.add_transform(defer_measurements, allow_postselect=False)
    adjoint = config.gradient_method in ("adjoint", "device")
    # one decomposition pass: with adjoint, straight to single-parameter trainable gates
    prog.add_transform(decompose, stopping_condition=supports_adjoint_operation if adjoint else supports_operation,
                       name=name, skip_initial_state_prep=True, device_wires=device.wires)
    prog.add_transform(validate_unitaries)
    prog.add_transform(validate_measurements, analytic_measurements=_analytic_ok,
                       sample_measurements=_sample_ok, name=name)
    prog.add_transform(expand_broadcast_if_shots)
    if adjoint:
        add_adjoint_transforms(prog, name=name, device_wires=device.wires, decomposed=True)
    return prog


def add_adjoint_transforms(prog, *, name, device_wires=None, decomposed=False):
    """The adjoint-specific checks (also used by ``supports_derivatives``)."""
    prog.add_transform(no_sampling, name=f"adjoint + {name}")
    if not decomposed:
        prog.add_transform(decompose, stopping_condition=supports_adjoint_operation, name=f"adjoint + {name}",
                           skip_initial_state_prep=True, device_wires=device_wires)
    prog.add_transform(validate_observables, lambda o: o.pauli_rep is not None or o.has_matrix,
                       name=f"adjoint + {name}")
    prog.add_transform(expvals_only, name=name)
    # PennyLane's ML interfaces pair device Jacobians with scalar parameters, so a QNode's
    # broadcast tape is expanded here; the engine's adjoint_jacobian itself is batched.
    prog.add_transform(broadcast_expand)
    prog.add_transform(validate_adjoint_trainable_params)
