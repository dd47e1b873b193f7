"""Registers large enough to switch the engine onto its other paths.

The engine changes strategy with size: the Z-rotation phase-lookup fusion
only for blocks spanning more than ``max(12, n - 4)`` wires (so n >= 13), the
threaded numba kernels from 2**18 amplitudes (n >= 18). Small-register tests
never reach them; these do.
"""
from __future__ import annotations

import numpy as np
import pennylane as qml
import pytest
from pennylane import numpy as pnp

from crosscheck import DEVICES, DTYPES, as_list, assert_all_close, default_qubit, execute, qhybrid_device, tol
from random_circuits import build, random_circuit, random_hamiltonian

pytestmark = [pytest.mark.slow,
              pytest.mark.parametrize("device", [d for d in DEVICES if d.id != "cpu-engine"]),  # (> 14 wires: the engine)
              pytest.mark.parametrize("c_dtype", DTYPES)]


def _qaoa_like(n, edges, x):
    for w in range(n):
        qml.Hadamard(w)
    for layer in range(2):
        for i, j in edges:
            qml.IsingZZ(x[layer, 0], wires=[i, j])
        for w in range(n):
            qml.RZ(0.3 * x[layer, 0], wires=w)
        qml.MultiRZ(x[layer, 0] / 2, wires=range(0, n, 3))
        for w in range(n):
            qml.RX(x[layer, 1], wires=w)


@pytest.mark.parametrize("n", [14, 16])
def test_zrot_lookup_block_energy_and_gradient(device, c_dtype, n):
    """A cost block spanning every wire (the lookup fusion), then its adjoint gradient
    (against lightning.qubit's)."""
    rng = np.random.default_rng(n)
    edges = sorted({tuple(sorted(int(v) for v in rng.choice(n, 2, replace=False))) for _ in range(2 * n)})
    h = qml.Hamiltonian([0.5] * len(edges) + [0.3], [qml.PauliZ(i) @ qml.PauliZ(j) for i, j in edges]
                        + [qml.PauliX(0)])

    def circuit(x):
        _qaoa_like(n, edges, x)
        return qml.expval(h)

    x = pnp.array([[0.4, 0.7], [-0.2, 0.3]], requires_grad=True)
    ours = qml.QNode(circuit, qhybrid_device(device, n, c_dtype), diff_method="adjoint")
    # lightning.qubit as the peer here: default.qubit's adjoint builds the Hamiltonian's
    # dense matrix (slow at 14 qubits, out of memory at 18)
    theirs = qml.QNode(circuit, qml.device("lightning.qubit", wires=n), diff_method="adjoint")
    np.testing.assert_allclose(ours(x), theirs(x), **tol(c_dtype))
    np.testing.assert_allclose(qml.grad(ours)(x), qml.grad(theirs)(x), **tol(c_dtype))


@pytest.mark.parametrize("n", [13, 18])
def test_random_circuit_on_large_register(device, c_dtype, n):
    rng = np.random.default_rng(100 + n)
    spec, params = random_circuit(rng, n_wires=n, depth=60)
    ops = build(spec, params)
    mps = [qml.state(), qml.probs(wires=[n - 1, 2, 0]), qml.expval(random_hamiltonian(rng, n, terms=20))]
    got = as_list(execute(qhybrid_device(device, n, c_dtype), ops, mps), 3)
    assert_all_close(got, as_list(default_qubit(ops, mps, n), 3), **tol(c_dtype))


def test_single_qubit_layers_on_large_register(device, c_dtype):
    """Layers of 1-qubit rotations on every wire of an 18-qubit register (the mixer kernel)."""
    n = 18
    ops = [qml.Hadamard(w) for w in range(n)]
    for layer in range(2):
        ops += [qml.RX(0.1 * layer + 0.05 * w, wires=w) for w in range(n)]
        ops += [qml.RY(0.2 - 0.03 * w, wires=w) for w in range(n)]
        ops += [qml.CNOT([w, (w + 1) % n]) for w in range(0, n, 2)]
        ops += [qml.IsingZZ(0.3, wires=[w, (w + 5) % n]) for w in range(n)]
    mps = [qml.state(), qml.expval(qml.PauliZ(0) @ qml.PauliX(17))]
    got = as_list(execute(qhybrid_device(device, n, c_dtype), ops, mps), 2)
    assert_all_close(got, as_list(default_qubit(ops, mps, n), 2), **tol(c_dtype))
