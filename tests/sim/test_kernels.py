"""The reference kernels (kernels.py) against dense numpy matrices."""
from __future__ import annotations

import numpy as np
import pennylane as qml
import pytest
import torch

from qhybrid.sim.kernels.torch_ops import apply_diagonal, apply_matrix


def _rand_state(n, b, rng):
    s = rng.normal(size=(b, 2**n)) + 1j * rng.normal(size=(b, 2**n))
    return s / np.linalg.norm(s, axis=1, keepdims=True)


@pytest.mark.parametrize("wires", [(0,), (2,), (1, 3), (3, 0), (2, 0, 1)])
def test_apply_matrix_matches_full_matrix(wires, rng):
    n = 4
    psi = _rand_state(n, 2, rng)
    u = qml.math.asarray(qml.matrix(qml.QubitUnitary(_unitary(len(wires), rng), wires=wires), wire_order=range(n)))
    small = _unitary(len(wires), rng)
    full = qml.matrix(qml.QubitUnitary(small, wires=list(wires)), wire_order=range(n))
    out = apply_matrix(torch.tensor(psi), torch.tensor(small), list(wires), n).numpy()
    np.testing.assert_allclose(out, psi @ full.T, atol=1e-12)
    assert u.shape == (16, 16)


def test_apply_diagonal_matches_full_matrix(rng):
    n = 3
    psi = _rand_state(n, 1, rng)
    d = np.exp(1j * rng.uniform(size=4))
    full = qml.matrix(qml.DiagonalQubitUnitary(d, wires=[2, 0]), wire_order=range(n))
    out = apply_diagonal(torch.tensor(psi), torch.tensor(d), [2, 0], n).numpy()
    np.testing.assert_allclose(out, psi @ full.T, atol=1e-12)


def _unitary(k, rng):
    a = rng.normal(size=(2**k, 2**k)) + 1j * rng.normal(size=(2**k, 2**k))
    q, _ = np.linalg.qr(a)
    return q
