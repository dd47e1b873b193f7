"""The tape plan (plugin/plan.py): made once per structure, reused with new parameters, and
exact against default.qubit: merged Z-rotation runs, native ApproxTimeEvolution, the chain rule
from engine columns back to tape parameters."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pennylane as qml
import pytest
from pennylane import numpy as pnp

from qhybrid.plugin.plan import PlanCache, make_plan, structure_key
from qhybrid.plugin.preprocess import supports_adjoint_operation, supports_operation

TOL = {"atol": 1e-10, "rtol": 1e-10}


@pytest.fixture(scope="module")
def clique():
    """A small seed-style Max-Clique QAOA problem (cost and mixer Hamiltonians)."""
    return qml.qaoa.max_clique(nx.gnm_random_graph(6, 7, seed=3), constrained=False)


def _qaoa(cost_h, mixer_h, n, p):
    def circuit(x):
        for w in range(n):
            qml.Hadamard(w)
        qml.layer(lambda g, a: (qml.qaoa.cost_layer(g, cost_h), qml.qaoa.mixer_layer(a, mixer_h)), p, x[0], x[1])
        return qml.expval(cost_h)

    return circuit


def _values_and_grads(circuit, n, xs, name="qhybrid.cpu", diff_method="adjoint", **options):
    qnode = qml.QNode(circuit, qml.device(name, wires=n, **options), diff_method=diff_method)
    out = [(float(qnode(x)), qml.grad(qnode)(x)) for x in xs]
    return out, qnode.device


def test_qaoa_matches_default_qubit_over_steps(clique, monkeypatch):
    """One plan serves every step of a loop, each with new angles, all exact; the engine's fused
    plan is kept beside it (built once: forward and adjoint walk the same one every step)."""
    import qhybrid.sim.fuse as fuse_module

    built, real = [], fuse_module.build_plan
    monkeypatch.setattr(fuse_module, "build_plan", lambda *a, **k: built.append(1) or real(*a, **k))
    circuit = _qaoa(*clique, 6, 2)
    xs = [pnp.array(np.random.default_rng(s).uniform(size=(2, 2)), requires_grad=True) for s in range(2)]
    theirs, _ = _values_and_grads(circuit, 6, xs, "default.qubit", "backprop")
    for small_wires, engine_plans in ((0, 1), (14, 0)):  # the engine's path; the numpy path builds none
        built.clear()
        ours, dev = _values_and_grads(circuit, 6, xs, small_wires=small_wires)
        for (v, g), (vp, gp) in zip(ours, theirs):
            np.testing.assert_allclose(v, vp, **TOL)
            np.testing.assert_allclose(g, gp, **TOL)
        assert len(dev._plans) == 1 and len(built) == engine_plans


def test_time_evolution_runs_natively(clique):
    """ApproxTimeEvolution is not decomposed (with only its time trainable): the plan expands it."""
    cost_h, _ = clique
    t = pnp.array(0.4, requires_grad=True)
    op = qml.ApproxTimeEvolution(cost_h, t, 2)
    assert supports_operation(qml.ApproxTimeEvolution(cost_h, 0.4, 2))
    assert supports_adjoint_operation(op)
    assert not supports_operation(op)  # trainable time without adjoint: PennyLane decomposes it
    coeffs = pnp.array(np.ones(3), requires_grad=True)
    trainable_h = qml.Hamiltonian(coeffs, [qml.Z(0), qml.Z(0) @ qml.Z(1), qml.X(1)])
    assert not supports_adjoint_operation(qml.ApproxTimeEvolution(trainable_h, t, 1))
    odd = qml.Hamiltonian([0.5], [qml.X(0) @ qml.Y(1)])  # no table gate for XY
    assert not supports_adjoint_operation(qml.ApproxTimeEvolution(odd, t, 1))


@pytest.mark.parametrize("steps", [1, 3])
def test_time_evolution_gradient(steps):
    """Trotter steps, an XY word decomposed by PennyLane beside table words, a time used twice."""
    h = qml.Hamiltonian([0.7, -0.3, 1.1, 0.4], [qml.Z(0) @ qml.Z(2), qml.X(1), qml.Y(0) @ qml.Y(1),
                                                qml.X(0) @ qml.Y(2)])

    def circuit(x):
        qml.RY(x[0], 0)
        qml.RX(0.3, 1)
        qml.ApproxTimeEvolution(h, x[1], steps)
        qml.ApproxTimeEvolution(h, x[1], 1)
        return qml.expval(qml.Z(0) @ qml.X(1) + 0.5 * qml.Y(2))

    x = pnp.array([0.4, 0.9], requires_grad=True)
    (ours,), _ = _values_and_grads(circuit, 3, [x])
    (theirs,), _ = _values_and_grads(circuit, 3, [x], "default.qubit", "backprop")
    np.testing.assert_allclose(ours[0], theirs[0], **TOL)
    np.testing.assert_allclose(ours[1], theirs[1], **TOL)


def _zrun_tape(x):
    ops = [qml.Hadamard(0), qml.Hadamard(1), qml.Hadamard(2),
           qml.IsingZZ(x[0], [0, 1]), qml.RZ(x[1], 2), qml.adjoint(qml.IsingZZ(x[2], [1, 0])),
           qml.MultiRZ(x[3], [0, 1, 2]), qml.PauliRot(x[4], "ZZ", [0, 1]), qml.RZ(x[0], 0), qml.RX(x[1], 1)]
    tape = qml.tape.QuantumScript(ops, [qml.expval(qml.X(0) @ qml.Y(1) + qml.Z(2))])
    tape.trainable_params = list(range(7))
    return tape


def test_zrotation_runs_merge_per_word():
    """A run of Z-rotations becomes one rotation per wire set, 1-qubit first; the gate after it
    stays where it was."""
    plan = make_plan(_zrun_tape(np.arange(1, 6) / 7), range(3))
    names = [(s.name, s.wires) for s in plan.slots]
    assert names == [("Hadamard", (0,)), ("Hadamard", (1,)), ("Hadamard", (2,)), ("RZ", (2,)), ("RZ", (0,)),
                     ("IsingZZ", (0, 1)), ("MultiRZ", (0, 1, 2)), ("RX", (1,))]
    # the ZZ on (0, 1) sums three tape parameters, the adjoint one with -1
    np.testing.assert_allclose(plan.chain[2], [1, 0, -1, 0, 1, 0, 0])


def test_merged_run_jacobian_matches_default_qubit():
    """Each tape parameter's derivative through merged gates (shared, adjoint, repeated)."""
    x = np.array([0.3, -0.8, 1.2, 0.5, -0.4])
    tape = _zrun_tape(x)
    dev = qml.device("qhybrid.cpu", wires=3)
    ours = qml.execute([tape], dev, diff_method="adjoint", gradient_kwargs={})[0]
    theirs = qml.execute([tape], qml.device("default.qubit", wires=3))[0]
    np.testing.assert_allclose(ours, theirs, **TOL)
    jac = dev.compute_derivatives([dev.preprocess_transforms()((tape,))[0][0]])[0]
    ref = qml.gradients.param_shift(tape)
    want = ref[1](qml.execute(ref[0], qml.device("default.qubit", wires=3)))
    np.testing.assert_allclose(np.asarray(jac), np.asarray(want), **TOL)


def test_structure_key_and_cache():
    """New parameters reuse the plan; other wires, trainables or Hamiltonian coefficients do not."""
    cache = PlanCache(max_entries=2)
    a, b = _zrun_tape(np.arange(5) / 3), _zrun_tape(np.arange(5) / 5)
    assert cache.plan(a, range(3)) is cache.plan(b, range(3))
    b.trainable_params = [3, 4]
    assert structure_key(a, range(3)) != structure_key(b, range(3))
    assert structure_key(a, range(3)) != structure_key(a, (2, 1, 0))
    h1 = qml.Hamiltonian([0.5, 1.0], [qml.Z(0), qml.Z(0) @ qml.Z(1)])
    h2 = qml.Hamiltonian([0.5, 2.0], [qml.Z(0), qml.Z(0) @ qml.Z(1)])
    tapes = [qml.tape.QuantumScript([qml.ApproxTimeEvolution(h, 0.3, 1)], [qml.expval(qml.Z(0))]) for h in (h1, h2)]
    assert structure_key(tapes[0], range(2)) != structure_key(tapes[1], range(2))
    cache.plan(tapes[0], range(2))
    cache.plan(tapes[1], range(2))
    assert len(cache) == 2  # the oldest dropped


def test_broadcast_through_plan():
    """A broadcast parameter keeps its batch axis through a merged run (forward)."""
    x = np.array([0.1, 0.7, -0.4])

    def circuit():
        qml.Hadamard(0)
        qml.Hadamard(1)
        qml.IsingZZ(x, [0, 1])
        qml.RZ(0.3, 0)
        qml.IsingZZ(0.2, [1, 0])
        qml.RX(0.5, 1)
        return qml.expval(qml.X(0)), qml.probs(wires=[1])

    ours = qml.QNode(circuit, qml.device("qhybrid.cpu", wires=2))()
    theirs = qml.QNode(circuit, qml.device("default.qubit", wires=2))()
    for o, t in zip(ours, theirs):
        assert np.shape(o) == np.shape(t)
        np.testing.assert_allclose(o, t, **TOL)


def test_broadcast_calls_beside_plain_ones():
    """A tape structure met with and without a broadcast angle: the kept engine plan serves only
    the plain calls (the broadcast ones plan their own), each call exact."""
    dev = qml.device("qhybrid.cpu", wires=3)

    def circuit(a):
        for w in range(3):
            qml.Hadamard(w)
        qml.IsingZZ(a, [0, 1])
        qml.IsingZZ(0.4, [1, 2])
        qml.RZ(0.2, 2)
        qml.RX(0.3, 0)
        return qml.expval(qml.X(0) @ qml.X(1))

    ours, theirs = qml.QNode(circuit, dev), qml.QNode(circuit, qml.device("default.qubit", wires=3))
    for a in (0.3, np.array([0.1, 0.9]), 0.7, np.array([-0.2, 0.5, 1.1])):
        np.testing.assert_allclose(ours(a), theirs(a), **TOL)
