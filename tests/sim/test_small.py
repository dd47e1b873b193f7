"""The small-circuit engine (numpy alone) against the engine: states, measurements, adjoint."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch
from simhelpers import make_circuit, random_ops

from qhybrid.errors import OperationError
from qhybrid.sim import Measurement, Observable, Operation, adjoint_jacobian, final_state
from qhybrid.sim.measure import measure
from qhybrid.sim import small
from qhybrid.sim.circuit import DenseTerm, PauliTerm

TOL = {np.complex128: 1e-10, np.complex64: 2e-5}
TORCH = {np.complex128: torch.complex128, np.complex64: torch.complex64}


def _obs(n, rng, terms=5, dense=True):
    out = []
    for _ in range(terms):
        wires = rng.choice(n, int(rng.integers(1, n + 1)), replace=False)
        out.append(PauliTerm(complex(rng.normal()), tuple((int(w), str(rng.choice(list("XYZ")))) for w in wires)))
    out.append(PauliTerm(0.7, tuple((int(w), "Z") for w in rng.choice(n, 2, replace=False))))
    if not dense:
        return Observable(tuple(out))
    a = rng.normal(size=(4, 4)) + 1j * rng.normal(size=(4, 4))
    wires = tuple(int(w) for w in rng.choice(n, 2, replace=False))
    return Observable(tuple(out), (DenseTerm(0.5, wires, a + a.conj().T),))


def _circuit(seed, *, batch=None, init=False, dense=True):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 7))
    ops = random_ops(n, 30, rng, batch=batch)
    ops.append(Operation("GlobalPhase", (), (0.3,), (0,)))
    state = None
    if init:
        v = rng.normal(size=2**n) + 1j * rng.normal(size=2**n)
        state = (v / np.linalg.norm(v))[None]
    ms = [Measurement("expval", _obs(n, rng, dense=dense)), Measurement("expval", Observable.pauli({"Y": 1.0}, wires=(n - 1,)))]
    return make_circuit(n, ops, ms, state)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("seed", range(4))
def test_states_and_measurements_match_the_engine(seed, dtype):
    c = _circuit(seed, batch=3 if seed % 2 else None, init=seed == 2)
    got = small.final_state(c, dtype=dtype)
    want = final_state(c, dtype=TORCH[dtype], kernels="torch", fuse=False)
    assert got.dtype == dtype and got.shape == tuple(want.shape)
    np.testing.assert_allclose(got, want.numpy(), atol=TOL[dtype], rtol=0)
    n = c.n_wires
    for m in (*c.measurements, Measurement("var", c.measurements[0].obs), Measurement("probs", wires=(n - 1, 0)),
              Measurement("probs"), Measurement("state")):
        np.testing.assert_allclose(small.measure(got, m, n), measure(want, m, n, kernels="torch").numpy(),
                                   atol=TOL[dtype] * 10, rtol=0)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("seed", range(4))
def test_adjoint_jacobian_matches_the_engine(seed, dtype):
    c = _circuit(seed, batch=3 if seed % 2 else None, init=seed == 2)
    vals, jac = small.adjoint_jacobian(c, dtype=dtype, return_values=True)
    wvals, wjac = adjoint_jacobian(c, dtype=TORCH[dtype], return_values=True, kernels="torch", fuse=False)
    assert jac.shape == tuple(wjac.shape) and jac.dtype == np.float64
    np.testing.assert_allclose(jac, wjac.numpy(), atol=TOL[dtype] * 10, rtol=0)
    np.testing.assert_allclose(vals, wvals.numpy(), atol=TOL[dtype] * 10, rtol=0)
    again = small.adjoint_jacobian(c, dtype=dtype, state=small.final_state(c, dtype=dtype))
    np.testing.assert_array_equal(again, jac)


def test_trainable_gate_without_generator_is_refused():
    c = make_circuit(1, [Operation("Rot", (0,), (0.1, 0.2, 0.3), (0,))],
                     [Measurement("expval", Observable.pauli({"Z": 1.0}))])
    with pytest.raises(OperationError, match="Rot"):
        small.adjoint_jacobian(c)
    with pytest.raises(OperationError, match="var"):
        small.adjoint_jacobian(make_circuit(1, [], [Measurement("var", Observable.pauli({"Z": 1.0}))]))


def test_imports_neither_torch_nor_numba():
    code = ("import sys, qhybrid.sim.small as s, qhybrid.sim.circuit as c;"
            "s.final_state(c.Circuit(2, (c.Operation('Hadamard', (0,)),)));"
            "print(sorted(m for m in ('torch', 'numba') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"


def test_forward_pass_multiplies_each_wires_run_of_one_qubit_gates():
    """RX, RY, RZ on a wire are one step until a gate on more wires touches it; the state is
    the gate-by-gate one (a batched parameter and diagonal gates included)."""
    ops = [Operation("RX", (0,), (0.3,)), Operation("RY", (0,), (np.array([0.1, 0.7]),)),
           Operation("RZ", (0,), (0.5,)), Operation("S", (1,), ()), Operation("RZ", (1,), (0.2,)),
           Operation("CNOT", (0, 1), ()), Operation("Hadamard", (1,), ()), Operation("RX", (0,), (0.4,))]
    c = make_circuit(2, ops, [])
    assert [wires for _, wires, _ in small._merged(c.operations)] == [(0,), (1,), (0, 1), (1,), (0,)]
    states = np.zeros((1, 2, 4), dtype=np.complex128)
    states[:, :, 0] = 1
    for op in ops:
        states = small.apply_operation(states, op, 2)
    np.testing.assert_allclose(small.final_state(c), states[0], atol=1e-14)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("n", [1, 3, 5, 13, 14])  # 14: Kronecker chunks of two wires
def test_unbatched_forward_pass_is_the_gate_by_gate_state(n, dtype):
    """Layers of one-qubit matrices, permutation runs (a wire's matrix waiting across a run that
    touched it earlier) and other gates, applied by smallforward: the gate-by-gate state."""
    rng = np.random.default_rng(n)
    ops = random_ops(n, 40, rng) if n > 1 else []
    ring = [Operation("CNOT", (w, (w + 1) % n)) for w in range(n)] if n > 1 else []
    layer = [Operation(g, (w,), (float(rng.uniform(0, 6)),), adjoint=bool(w % 2)) for w in range(n) for g in ("RX", "RY", "RZ")]
    ops = layer + ring + ops + layer + ring + [Operation("Rot", (0,), (0.1, 0.2, 0.3))]
    if n >= 3:
        ops += [Operation("CNOT", (0, 1)), Operation("RX", (0,), (0.4,)), Operation("Toffoli", (2, 1, 0)),
                Operation("SWAP", (1, 2), adjoint=True), Operation("Hadamard", (2,))]
    states = np.zeros((1, 1, 2**n), dtype=dtype)
    states[..., 0] = 1
    for op in ops:
        states = small.apply_operation(states, op, n)
    got = small.final_state(make_circuit(n, ops, []), dtype=dtype)
    assert got.dtype == dtype and got.shape == (1, 2**n)
    np.testing.assert_allclose(got, states[0], atol=TOL[dtype])


def test_unbatched_layers_and_cnot_rings_take_no_gate_by_gate_step():
    """The layered circuit (RX, RY, RZ on every wire, a CNOT ring; three times) is matrix
    products and one gather a ring: the gate-by-gate ``apply`` is never called."""
    from qhybrid.sim import smallforward

    n, calls = 6, []
    ops = []
    for layer in range(3):
        ops += [Operation(g, (w,), (0.1 * w + 0.3 * i + layer,)) for w in range(n) for i, g in enumerate(("RX", "RY", "RZ"))]
        ops += [Operation("CNOT", (w, (w + 1) % n)) for w in range(n)]

    def apply(*args, **kwargs):
        calls.append(args[2])
        return small._apply(*args, **kwargs)

    state = np.zeros(2**n, dtype=np.complex128)
    state[0] = 1
    got = smallforward.forward(state, tuple(ops), n, small._operator, apply)
    assert calls == []
    ref = np.zeros((1, 1, 2**n), dtype=np.complex128)
    ref[..., 0] = 1
    for op in ops:
        ref = small.apply_operation(ref, op, n)
    np.testing.assert_allclose(got, ref[0, 0], atol=1e-12)
