"""The CCQC structure and its small matrices against PennyLane's definitions."""
from __future__ import annotations

import numpy as np
import pennylane as qml
import pytest
import torch

from qhybrid.qml import circuit


def test_chain_follows_the_braket_example():
    # control 0, target (control - range) mod n, next control = target
    assert circuit.chain_pairs(4, 1) == ((0, 3), (3, 2), (2, 1), (1, 0))
    assert circuit.chain_pairs(5, 3) == ((0, 2), (2, 4), (4, 1), (1, 3), (3, 0))
    assert circuit.chain_pairs(4, 3) == ((0, 1), (1, 2), (2, 3), (3, 0))


def test_chain_revisits_wires_when_range_shares_a_factor():
    assert circuit.chain_pairs(4, 2) == ((0, 2), (2, 0), (0, 2), (2, 0))


@pytest.mark.parametrize("dtype", [torch.complex128, torch.complex64])
def test_rot_matrices_match_pennylane(dtype):
    params = torch.tensor([[0.3, -1.2, 2.5], [4.0, 0.7, -0.1]], dtype=torch.float64)
    mats = circuit.rot_matrices(params, dtype)
    assert mats.dtype == dtype
    for p, m in zip(params, mats):
        np.testing.assert_allclose(m.numpy(), qml.Rot.compute_matrix(*p.numpy()), atol=1e-6)


@pytest.mark.parametrize("rotation", circuit.EMBEDDINGS)
def test_embedding_vectors_are_first_columns(rotation):
    x = torch.tensor([0.4, -2.0], dtype=torch.float64)
    vecs = circuit.embedding_vectors(x, rotation, torch.complex128)
    gate = {"X": qml.RX, "Y": qml.RY, "Z": qml.RZ}[rotation]
    for xi, v in zip(x, vecs):
        np.testing.assert_allclose(v.numpy(), gate.compute_matrix(float(xi))[:, 0], atol=1e-12)


def test_observable_is_rotated_z():
    rot = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64)
    obs = circuit.z_observable(rot, torch.complex128).numpy()
    r = qml.Rot.compute_matrix(0.1, 0.2, 0.3)
    np.testing.assert_allclose(obs, r.conj().T @ np.diag([1, -1]) @ r, atol=1e-12)
