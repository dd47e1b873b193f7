"""The engine's pure API (``qhybrid.sim``) against the reference oracle, without the plugin.

Every combination of the engine's paths - fused or not, on every registered kernel set
(the shared ``kernel_set`` fixture, ``tests/kernelsets.py``) - on random circuits with long diagonal runs and
single-wire runs, in both dtypes; adjoint Jacobians against central finite
differences of the reference.
"""
from __future__ import annotations

import numpy as np
import pennylane as qml
import pytest
import torch

from qhybrid.sim import Circuit, Measurement, Observable, Operation, adjoint_jacobian, simulate
from qhybrid.sim import reference
from kernelsets import device_for
from random_circuits import build, random_circuit, random_hermitian

FUSE = [pytest.param(True, id="fused"), pytest.param(False, id="unfused")]
DTYPES = [pytest.param(torch.complex128, 1e-10, id="c128"), pytest.param(torch.complex64, 1e-5, id="c64")]


def to_engine(spec, params) -> list[Operation]:
    """The engine operations of a random_circuits spec (same gates, same parameters)."""
    ops, i = [], 0
    for g in spec:
        p = tuple(params[i + j] for j in range(g.n_params))
        i += g.n_params
        trainable = (0,) if g.n_params == 1 else ()
        if g.name == "QubitUnitary":
            ops.append(Operation("QubitUnitary", g.wires, (g.matrix,), adjoint=g.adjoint))
        elif g.name == "DiagonalUnitary":
            ops.append(Operation("DiagonalQubitUnitary", g.wires, (np.diag(g.matrix),), adjoint=g.adjoint))
        elif g.name == "ControlledQubitUnitary":
            full = np.eye(2 ** len(g.wires), dtype=complex)
            full[-2:, -2:] = g.matrix
            ops.append(Operation("QubitUnitary", g.wires, (full,), adjoint=g.adjoint))
        elif g.name == "GlobalPhase":
            ops.append(Operation("GlobalPhase", (0,), p, trainable, g.adjoint))
        else:
            ops.append(Operation(g.name, g.wires, p, trainable, g.adjoint))
    return ops


def _pauli_sum(rng, n, terms=12):
    words = {}
    for _ in range(terms):
        k = int(rng.integers(1, n + 1))
        wires = sorted(int(w) for w in rng.choice(n, size=k, replace=False))
        letters = "Z" * k if rng.random() < 0.5 else "".join(rng.choice(list("XYZ"), size=k))
        words[tuple(zip(wires, letters))] = float(rng.uniform(-1, 1))
    return words


def _pl_pauli_sum(words):
    coeffs = list(words.values())
    ops = [qml.prod(*[getattr(qml, "Pauli" + c)(w) for w, c in word]) for word in words]
    return qml.Hamiltonian(coeffs, ops)


@pytest.mark.parametrize("dtype, atol", DTYPES)
@pytest.mark.parametrize("fuse", FUSE)
@pytest.mark.parametrize("seed", range(4))
def test_state_and_measurements(seed, kernel_set, fuse, dtype, atol):
    rng = np.random.default_rng(3000 + seed)
    n = 3 + seed
    spec, params = random_circuit(rng, n_wires=n, depth=70)
    words = _pauli_sum(rng, n)
    herm = random_hermitian(rng, 4)
    obs = Observable(paulis=Observable.pauli(words).paulis,
                     dense=Observable.hermitian(herm, wires=(n - 1, 0)).dense)
    ms = (Measurement("state"), Measurement("probs", wires=(n - 1, 1)),
          Measurement("expval", obs=obs), Measurement("var", obs=obs))
    got = simulate(Circuit(n, tuple(to_engine(spec, params)), ms), dtype=dtype, kernels=kernel_set, fuse=fuse,
                   device=device_for(kernel_set))

    pl_obs = _pl_pauli_sum(words) + qml.Hermitian(herm, wires=[n - 1, 0])
    tape = qml.tape.QuantumScript(build(spec, params), [qml.state(), qml.probs(wires=[n - 1, 1]),
                                                        qml.expval(pl_obs), qml.var(pl_obs)])
    want = reference.simulate(tape, wire_order=range(n))
    for m, g, w in zip(ms, got, want):
        g = g.cpu().numpy()
        assert g.shape == (1,) + np.shape(w), m.kind
        np.testing.assert_allclose(g[0], w, atol=atol * (10 if m.kind == "var" else 1),
                                   rtol=atol, err_msg=m.kind)


@pytest.mark.parametrize("fuse", FUSE)
def test_broadcast_state(kernel_set, fuse):
    rng = np.random.default_rng(3100)
    n = 4
    spec, params = random_circuit(rng, n_wires=n, depth=40, batch=3)
    got = simulate(Circuit(n, tuple(to_engine(spec, params)), (Measurement("state"),)),
                   kernels=kernel_set, fuse=fuse, device=device_for(kernel_set))[0].cpu().numpy()
    want = reference.final_state(qml.tape.QuantumScript(build(spec, params)), wire_order=range(n))
    np.testing.assert_allclose(got, want, atol=1e-10)


@pytest.mark.parametrize("fuse", FUSE)
@pytest.mark.parametrize("seed", range(2))
def test_adjoint_jacobian_vs_finite_differences(seed, kernel_set, fuse):
    """Only single-parameter gates (Rot/CRot have no generator and are not trainable here)."""
    rng = np.random.default_rng(3200 + seed)
    n = 4
    spec, params = random_circuit(rng, n_wires=n, depth=40)
    words = _pauli_sum(rng, n)
    ops = to_engine(spec, params)
    circuit = Circuit(n, tuple(ops), (Measurement("expval", obs=Observable.pauli(words)),))
    jac = adjoint_jacobian(circuit, kernels=kernel_set, fuse=fuse, device=device_for(kernel_set)).cpu().numpy()[0, :, 0]

    # trainable columns are the 1-parameter gates, in order; differentiate the reference
    h = _pl_pauli_sum(words)
    index, col = [], 0
    for g in spec:
        if g.n_params == 1:
            index.append(col)
        col += g.n_params

    def energy(x):
        tape = qml.tape.QuantumScript(build(spec, x), [qml.expval(h)])
        return reference.simulate(tape, wire_order=range(n))

    eps = 1e-6
    fd = []
    for i in index:
        plus, minus = params.copy(), params.copy()
        plus[i] += eps
        minus[i] -= eps
        fd.append((energy(plus) - energy(minus)) / (2 * eps))
    np.testing.assert_allclose(jac, fd, atol=1e-7)
