"""The gate table against PennyLane's matrices and generators."""
from __future__ import annotations

import numpy as np
import pennylane as qml
import pytest
import torch

from qhybrid.sim import Operation
from qhybrid.sim.gates import GATES, gate_diagonal, gate_generator, gate_matrix, gate_matrix_stack

NAMES = [n for n in GATES if n not in ("QubitUnitary", "DiagonalQubitUnitary", "Identity", "U1", "CPhase")]


def _wires(name):
    return GATES[name].num_wires or 3


@pytest.mark.parametrize("name", NAMES)
def test_matrix_matches_pennylane(name, rng):
    k = _wires(name)
    params = list(rng.uniform(-2, 2, GATES[name].num_params))
    op = getattr(qml, name)(*params, wires=list(range(k)))
    m = gate_matrix(name, params, k, torch.complex128, "cpu")[0].numpy()
    np.testing.assert_allclose(m, qml.matrix(op), atol=1e-12)
    if GATES[name].is_diagonal:
        d = gate_diagonal(name, params, k, torch.complex128, "cpu")[0].numpy()
        np.testing.assert_allclose(np.diag(d), m, atol=1e-12)


@pytest.mark.parametrize("name", [n for n in NAMES if GATES[n].generator is not None])
def test_generator_is_derivative(name, rng):
    """dU/dtheta = i G U, checked by a central difference."""
    k = _wires(name)
    theta = float(rng.uniform(-2, 2))
    g = gate_generator(name, k)
    g = np.diag(g) if g.ndim == 1 else g
    u = lambda t: gate_matrix(name, [t], k, torch.complex128, "cpu")[0].numpy()  # noqa: E731
    h = 1e-6
    du = (u(theta + h) - u(theta - h)) / (2 * h)
    np.testing.assert_allclose(du, 1j * g @ u(theta), atol=1e-8)


def test_adjoint_matrix_and_generator(rng):
    m = gate_matrix("RX", [0.3], 1, torch.complex128, "cpu", adjoint=True)[0].numpy()
    np.testing.assert_allclose(m, qml.matrix(qml.RX(-0.3, 0)), atol=1e-12)
    np.testing.assert_allclose(gate_generator("RX", 1, adjoint=True), -gate_generator("RX", 1))


def test_broadcast_parameters_give_a_batch():
    m = gate_matrix("RY", [np.array([0.1, 0.2, 0.3])], 1, torch.complex64, "cpu")
    assert m.shape == (3, 2, 2) and m.dtype == torch.complex64
    np.testing.assert_allclose(m[2].numpy(), qml.matrix(qml.RY(0.3, 0)), atol=1e-6)


def test_stacked_matrices_match_one_by_one():
    """``gate_matrix_stack`` (one call per gate name for plain-float parameters) gives each
    operation the matrix ``gate_matrix`` gives it, broadcast over the batch, in a fresh array;
    0-d arrays, numpy floats and broadcast parameters alike."""
    ops = [Operation("RY", (0,), (0.3,)), Operation("RZ", (1,), (np.float64(-1.2),)), Operation("RY", (2,), (2.5,)),
           Operation("Hadamard", (0,)), Operation("RX", (1,), (0.7,), adjoint=True), Operation("RX", (3,), (np.array(0.1),)),
           Operation("Rot", (2,), (0.1, 0.2, 0.3)), Operation("PhaseShift", (0,), (0.4,)),
           Operation("RY", (1,), (np.array([0.1, 0.2, 0.3]),)), Operation("S", (3,), adjoint=True),
           Operation("Hadamard", (1,))]
    got = gate_matrix_stack(ops, 1)
    assert got.shape == (len(ops), 3, 2, 2) and got.flags.writeable
    for op, m in zip(ops, got):
        want = gate_matrix(op.name, op.params, 1, torch.complex128, "cpu", op.adjoint).numpy()
        np.testing.assert_allclose(m, np.broadcast_to(want, m.shape), atol=1e-15)
    got[3][0, 0, 0] = 7.0  # the caller's own copy: the next call is unchanged
    np.testing.assert_allclose(gate_matrix_stack(ops[3:4], 1)[0], gate_matrix("Hadamard", (), 1, torch.complex128, "cpu").numpy())
    assert gate_matrix_stack(ops[:3], 1).shape == (3, 1, 2, 2)


SCALAR_NAMES = [n for n in GATES if GATES[n].scalar is not None]


def test_one_qubit_rotations_have_a_scalar_form():
    assert set(SCALAR_NAMES) == {"RX", "RY", "RZ", "PhaseShift", "U1", "Rot"}


@pytest.mark.parametrize("name", SCALAR_NAMES)
def test_scalar_form_is_the_table_matrix_to_the_bit(name, rng):
    """The scalar form (Python floats in, Python numbers out) gives what the row's numpy builder
    gives for the same angles, bit for bit: one formula serves both."""
    gate = GATES[name]
    angles = rng.uniform(-20, 20, (50, gate.num_params))
    cols = [np.ascontiguousarray(angles[:, j]) for j in range(gate.num_params)]
    want = gate.diagonal(cols, 1) if gate.is_diagonal else gate.matrix(cols, 1).reshape(-1, 4)
    got = np.array([gate.scalar(*(float(a) for a in row)) for row in angles], dtype=complex)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert all(type(x) in (float, complex) for x in gate.scalar(*angles[0].tolist()))
