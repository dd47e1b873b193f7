"""Adjoint Jacobians against central finite differences of the reference path."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from simhelpers import make_circuit, random_ops

from qhybrid.errors import OperationError
from qhybrid.sim import Cache, Measurement, Observable, Operation, adjoint_jacobian, simulate
from qhybrid.sim.circuit import PauliTerm


def _fd_jacobian(c, h=1e-6):
    """(M, T, B) by central differences, one trainable parameter at a time (reference path)."""
    cols = []
    for k, op in enumerate(c.operations):
        for j in op.trainable:
            vals = []
            for s in (+h, -h):
                params = list(op.params)
                params[j] = np.asarray(params[j]) + s
                ops = list(c.operations)
                ops[k] = dataclasses.replace(op, params=tuple(params))
                res = simulate(dataclasses.replace(c, operations=tuple(ops)), kernels="torch", fuse=False)
                vals.append(torch.stack(res))
            cols.append((vals[0] - vals[1]) / (2 * h))
    return torch.stack(cols, dim=1)


def _obs(n, rng, terms=5):
    out = []
    for _ in range(terms):
        wires = rng.choice(n, int(rng.integers(1, n + 1)), replace=False)
        out.append(PauliTerm(complex(rng.normal()), tuple((int(w), str(rng.choice(list("XYZ")))) for w in wires)))
    return Observable(tuple(out))


@pytest.mark.parametrize("seed", range(5))
def test_random_circuits_match_finite_differences(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 7))
    c = make_circuit(n, random_ops(n, 30, rng), [Measurement("expval", _obs(n, rng)),
                                                 Measurement("expval", Observable.pauli({"Z": 1.0}, wires=(0,)))])
    jac = adjoint_jacobian(c)
    np.testing.assert_allclose(jac.numpy(), _fd_jacobian(c).numpy(), atol=1e-6)
    np.testing.assert_allclose(adjoint_jacobian(c, kernels="torch", fuse=False).numpy(), jac.numpy(), atol=1e-10)


def test_broadcast_batch(rng):
    n = 4
    c = make_circuit(n, random_ops(n, 25, rng, batch=3), [Measurement("expval", _obs(n, rng))])
    jac = adjoint_jacobian(c)
    assert jac.shape[2] == 3
    np.testing.assert_allclose(jac.numpy(), _fd_jacobian(c).numpy(), atol=1e-6)


def test_hamiltonian_with_many_terms_and_values(rng):
    n = 6
    c = make_circuit(n, random_ops(n, 30, rng), [Measurement("expval", _obs(n, rng, terms=200))])
    values, jac = adjoint_jacobian(c, return_values=True)
    np.testing.assert_allclose(values.numpy(), torch.stack(simulate(c, kernels="torch")).numpy(), atol=1e-10)
    np.testing.assert_allclose(jac.numpy(), _fd_jacobian(c).numpy(), atol=1e-5)


def test_qaoa_like_zrot_runs_and_layers(rng):
    """Runs of MultiRZ (one-pass derivatives) and RX layers (blocked), at a size with big strides."""
    n = 15
    edges = [tuple(int(w) for w in rng.choice(n, 2, replace=False)) for _ in range(12)]
    ops = [Operation("Hadamard", (w,)) for w in range(n)]
    for layer in range(2):
        ops += [Operation("MultiRZ", e, (0.3 + layer,), (0,)) for e in edges]
        ops += [Operation("RX", (w,), (0.2 * w,), (0,)) for w in range(n)]
    cost = Observable.pauli({((a, "Z"), (b, "Z")): 0.5 for a, b in edges})
    c = make_circuit(n, ops, [Measurement("expval", cost)])
    cache = Cache()
    fast = adjoint_jacobian(c, cache=cache)
    ref = adjoint_jacobian(c, kernels="torch", fuse=False)
    np.testing.assert_allclose(fast.numpy(), ref.numpy(), atol=1e-9)


@pytest.mark.parametrize("batch", [None, 3])
def test_runs_of_one_qubit_gates_on_one_wire(rng, batch):
    """Several gates per wire (fused into one 2x2 and differentiated from the wire's cross term),
    lone gates, untrainable gates inside a run, low and high wires, two observables, broadcast."""
    n = 15

    def angle():
        return rng.uniform(-np.pi, np.pi, size=batch) if batch else float(rng.uniform(-np.pi, np.pi))

    ops = []
    for layer in range(2):
        for w in range(n):
            names = ["RZ", "RY", "RZ"] if w % 3 else ["RX"]
            if w % 5 == 4:
                names = ["Hadamard", "RY", "S", "PhaseShift"]
            for name in names:
                plain = name in ("Hadamard", "S")
                ops.append(Operation(name, (w,), () if plain else (angle(),), () if plain or (w + layer) % 7 == 3 else (0,)))
        ops += [Operation("CNOT", (w, (w + 1 + layer) % n)) for w in range(n)]
    c = make_circuit(n, ops, [Measurement("expval", _obs(n, rng, terms=4)),
                              Measurement("expval", Observable.pauli({"X": 0.7}, wires=(n - 1,)))])
    fast = adjoint_jacobian(c)
    ref = adjoint_jacobian(c, kernels="torch", fuse=False)
    assert fast.shape[2] == (batch or 1)
    np.testing.assert_allclose(fast.numpy(), ref.numpy(), atol=1e-10)
    c64 = adjoint_jacobian(c, dtype=torch.complex64)
    np.testing.assert_allclose(c64.numpy(), ref.numpy(), atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.complex128, torch.complex64])
def test_ladders_read_through_by_the_next_layer(rng, dtype):
    """With a cache, an undone CNOT ladder is read through by the layer step before it (spare
    buffers): a layer of low and high wires, one of high wires only, the last layer (nothing
    undone), and a ladder followed by a two-qubit gate (the ladder is applied first)."""
    n = 15
    ops = []

    def layer(wires):
        for w in wires:
            ops.append(Operation("RY", (w,), (float(rng.uniform(-3, 3)),), (0,)))
            ops.append(Operation("RZ", (w,), (float(rng.uniform(-3, 3)),), (0,)))

    def ladder(shift):
        ops.extend(Operation("CNOT", (w, (w + shift) % n)) for w in range(n))

    layer(range(n))
    ladder(1)
    layer(range(n))
    ops.append(Operation("IsingXX", (2, 9), (0.4,), (0,)))
    ladder(2)
    layer([0, 1])  # high wires only (strides >= the block)
    ladder(3)
    layer(range(n))
    ladder(1)
    c = make_circuit(n, ops, [Measurement("expval", _obs(n, rng, terms=6)),
                              Measurement("expval", Observable.pauli({"Y": 0.3}, wires=(4,)))])
    ref = adjoint_jacobian(c, kernels="torch", fuse=False)
    cache = Cache()
    for _ in range(2):  # the second call finds the spare buffers (and tables) in the cache
        got = adjoint_jacobian(c, dtype=dtype, cache=cache)
        np.testing.assert_allclose(got.numpy(), ref.numpy(), atol=1e-10 if dtype == torch.complex128 else 1e-5)
    assert any(k[0] == "adjoint_spare" for k in cache._items)


@pytest.mark.parametrize("n", [2, 3, 9, 16])
@pytest.mark.parametrize("dtype", [torch.complex128, torch.complex64])
def test_first_layer_on_zero_state_from_the_bras_alone(rng, n, dtype):
    """A circuit that starts with 1-qubit gates on |0...0>: that layer's derivatives come from the
    bras contracted with the product state (no planar pass). Covered: runs of several gates on
    one wire (RZ RY RZ, a constant gate, a non-trainable gate), wires the layer leaves out, a
    broadcast batch, two observables, with a cache (the ladder after the layer gathered into
    the spare buffer) and without (applied in place)."""
    batch = 3
    ops = []
    for w in range(n):
        if w == 1:
            continue  # |0> on this wire
        ops.append(Operation("RZ", (w,), (float(rng.uniform(-3, 3)),), (0,)))
        ops.append(Operation("RY", (w,), (rng.uniform(-3, 3, size=batch) if w == 0 else float(rng.uniform(-3, 3)),), (0,)))
        if w % 3 == 2:
            ops.append(Operation("Hadamard", (w,)))
        ops.append(Operation("RX", (w,), (float(rng.uniform(-3, 3)),), (0,) if w % 2 else ()))
    ops += [Operation("CNOT", (w, (w + 1) % n)) for w in range(n)] if n > 2 else [Operation("CNOT", (0, 1))]
    ops += [Operation("RY", (w,), (float(rng.uniform(-3, 3)),), (0,)) for w in range(n)]
    c = make_circuit(n, ops, [Measurement("expval", _obs(n, rng, terms=6)),
                              Measurement("expval", Observable.pauli({"X": 0.7}, wires=(n - 1,)))])
    ref = adjoint_jacobian(c, kernels="torch", fuse=False)
    assert ref.shape[2] == batch
    tol = 1e-10 if dtype == torch.complex128 else 2e-5
    for cache in (None, Cache()):
        got = adjoint_jacobian(c, dtype=dtype, cache=cache)
        np.testing.assert_allclose(got.numpy(), ref.numpy(), atol=tol)


def test_complex64_tolerance(rng):
    n = 4
    c = make_circuit(n, random_ops(n, 20, rng), [Measurement("expval", _obs(n, rng))])
    a = adjoint_jacobian(c).numpy()
    b = adjoint_jacobian(c, dtype=torch.complex64).numpy()
    np.testing.assert_allclose(a, b, atol=1e-5)


def test_errors():
    rot = Operation("Rot", (0,), (0.1, 0.2, 0.3), (0, 1))
    with pytest.raises(OperationError, match="Rot"):
        adjoint_jacobian(make_circuit(1, [rot], [Measurement("expval", Observable.pauli({"Z": 1}))]))
    with pytest.raises(OperationError, match="expval"):
        adjoint_jacobian(make_circuit(1, [Operation("RX", (0,), (0.1,), (0,))], [Measurement("probs")]))


@pytest.mark.cuda
def test_cuda_matches_cpu(rng):
    n = 5
    c = make_circuit(n, random_ops(n, 20, rng), [Measurement("expval", _obs(n, rng))])
    np.testing.assert_allclose(adjoint_jacobian(c, device="cuda").numpy(), adjoint_jacobian(c).numpy(), atol=1e-10)
