"""Fusion: fused and unfused runs agree on random circuits (also broadcast, complex64)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from simhelpers import TOL, assert_close, make_circuit, random_ops, reference_state

from qhybrid.sim import Cache, Operation, final_state
from qhybrid.sim.fuse import lower


@pytest.mark.parametrize("dtype", [torch.complex128, torch.complex64])
@pytest.mark.parametrize("seed", range(6))
def test_fused_equals_unfused(seed, dtype):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 8))
    c = make_circuit(n, random_ops(n, 40, rng))
    ref = reference_state(c)
    for kernels in ("numba", "torch"):
        got = final_state(c, dtype=dtype, kernels=kernels, fuse=True)
        assert_close(got.to(torch.complex128), ref, TOL[dtype] * 10)


def test_broadcast_fused_equals_unfused(rng):
    c = make_circuit(5, random_ops(5, 40, rng, batch=3))
    assert c.batch_size == 3
    assert_close(final_state(c, fuse=True), reference_state(c), 1e-10)


def test_single_qubit_runs_become_one_layer():
    ops = [Operation("RX", (0,), (0.1,)), Operation("RY", (0,), (0.2,)), Operation("RZ", (0,), (0.3,)),
           Operation("Hadamard", (1,)), Operation("S", (1,))]
    kops = lower(ops, 2)
    assert len(kops) == 1 and kops[0].kind == "layer" and kops[0].matrices.shape[0] == 2


def test_diagonal_run_is_one_pass():
    ops = [Operation("CZ", (0, 1)), Operation("IsingZZ", (1, 2), (0.3,)), Operation("PhaseShift", (2,), (0.2,)),
           Operation("MultiRZ", (0, 1, 2), (0.4,)), Operation("ControlledPhaseShift", (2, 0), (0.1,))]
    kops = lower(ops, 3)
    assert [k.kind for k in kops] == ["diag"]


def test_qaoa_cost_layer_uses_cached_lookup(rng):
    n = 18
    edges = [(int(a), int(b)) for a, b in (rng.choice(n, 2, replace=False) for _ in range(20))]
    ops = [Operation("Hadamard", (w,)) for w in range(n)]
    ops += [Operation("MultiRZ", e, (0.37,)) for e in edges] + [Operation("RX", (w,), (0.2,)) for w in range(n)]
    cache = Cache()
    kinds = [k.kind for k in lower(ops, n, cache=cache)]
    assert "lookup" in kinds and len(cache) == 1
    c = make_circuit(n, ops)
    assert_close(final_state(c, cache=cache), reference_state(c), 1e-10)
    assert_close(final_state(c, cache=cache), reference_state(c), 1e-10)  # from the cache


@pytest.mark.parametrize("n", [3, 12, 21])
def test_cnot_swap_ladders_become_one_permutation(rng, n):
    """A run of CNOTs and SWAPs is one gather pass; it and its inverse match gate-by-gate runs
    (n=21 uses three ten-bit digits of the index tables), with and without a scratch cache."""
    from qhybrid.sim.apply import apply
    from qhybrid.sim.bind import step_for

    perm = []
    for _ in range(3 * n):
        a, b = (int(w) for w in rng.choice(n, 2, replace=False))
        perm.append(Operation(str(rng.choice(["CNOT", "CNOT", "SWAP"])), (a, b)))
    ops = [Operation("RY", (w,), (float(rng.uniform(0, 3)),)) for w in range(n)] + perm
    kops = lower(perm, n)
    assert [k.kind for k in kops] == ["perm"]
    c = make_circuit(n, ops)
    state = final_state(c, cache=Cache())
    single = final_state(c, fuse=False)
    assert_close(state, single, 1e-12)
    for kernels, cache in (("numba", Cache()), ("numba", None), ("torch", None)):
        back = state.clone()
        apply(back, kops[0].inverse(), n, kernels=kernels, cache=cache)
        unwound = state.clone()
        for op in reversed(perm):
            apply(unwound, step_for(op, n, dtype=torch.complex128, device="cpu"), n, kernels="torch")
        assert_close(back, unwound, 1e-12)


def test_plan_is_built_once_and_bound_to_new_parameters(rng):
    """One plan serves every parameter set of its structure: bound to new angles it gives the
    reference state, forward and adjoint (with a ladder before a layer, a Z-rotation block, a
    first layer on |0...0>), and the key tells structures apart."""
    from qhybrid.sim import Measurement, Observable, adjoint_jacobian
    from qhybrid.sim.fuse import build_plan
    from qhybrid.sim.plan import structure_key

    n = 6

    def ops_for(x):
        ops = [Operation(g, (w,), (float(x[w, k]),), (0,)) for w in range(n) for k, g in enumerate(("RX", "RY"))]
        ops += [Operation("CNOT", (w, (w + 1) % n)) for w in range(n)]
        ops += [Operation("IsingZZ", (w, (w + 2) % n), (float(x[w, 2]),), (0,)) for w in range(n)]
        ops += [Operation("RZ", (w,), (float(x[w, 3]),), (0,)) for w in range(n)]
        return ops

    meas = [Measurement("expval", Observable.pauli({((0, "X"), (3, "Z")): 0.7}))]
    plan = build_plan(ops_for(rng.uniform(-3, 3, (n, 4))), n)
    assert [s.kind for s in plan.segments][:2] == ["layer", "ladder"]
    for _ in range(2):
        c = make_circuit(n, ops_for(rng.uniform(-3, 3, (n, 4))), meas)
        assert structure_key(c.operations) == plan.key
        assert_close(final_state(c, plan=plan), reference_state(c), 1e-10)
        ref = adjoint_jacobian(c, kernels="torch", fuse=False)
        np.testing.assert_allclose(adjoint_jacobian(c, plan=plan, cache=Cache()).numpy(), ref.numpy(), atol=1e-10)
    other = ops_for(rng.uniform(-3, 3, (n, 4)))
    other[0] = Operation("RX", (0,), (rng.uniform(-3, 3, size=2),), (0,))  # broadcast: another structure
    assert structure_key(other) != plan.key


def test_steps_invert():
    """Every step type's inverse undoes it (the adjoint sweep's undo)."""
    from qhybrid.sim.apply import apply
    from qhybrid.sim.steps import STEP_TYPES

    n = 13
    ops = [Operation("RX", (w,), (0.3 + w,)) for w in range(n)] + [Operation("CNOT", (w, w + 1)) for w in range(n - 1)]
    ops += [Operation("MultiRZ", (w, (w + 3) % n), (0.7,)) for w in range(n)] + [Operation("CRX", (0, 5), (0.2,))]
    ops += [Operation("CZ", (1, 2)), Operation("SWAP", (3, 4))]
    steps = lower(ops, n, cache=Cache())
    assert {type(s) for s in steps} == set(STEP_TYPES)
    psi = torch.randn(1, 2**n, dtype=torch.complex128)
    for step in steps:
        for kernels in ("numba", "torch"):
            assert_close(apply(apply(psi.clone(), step, n, kernels=kernels), step.inverse(), n, kernels=kernels), psi, 1e-10)


@pytest.mark.parametrize("dtype", [torch.complex128, torch.complex64])
def test_zrotation_runs_merge_per_wire_set(dtype):
    """A run of Z-rotations (repeated wire sets, an adjoint one, 1-qubit ones after 2-qubit ones)
    runs as one rotation per wire set, the 1-qubit ones first (they join the layer before the
    run); state and derivatives agree with the unfused run, each member's derivative its merged
    rotation's (times -1 when adjoint)."""
    from qhybrid.sim import Measurement, Observable, adjoint_jacobian
    from qhybrid.sim.fuse import build_plan

    ops = [Operation("RX", (w,), (0.3 + w,)) for w in range(4)]
    ops += [Operation("IsingZZ", (0, 1), (0.4,), (0,)), Operation("RZ", (2,), (0.5,), (0,)),
            Operation("MultiRZ", (1, 0), (0.6,), (0,), adjoint=True), Operation("RZ", (2,), (-0.2,)),
            Operation("MultiRZ", (1, 2, 3), (0.7,), (0,)), Operation("IsingZZ", (0, 1), (0.1,), (0,))]
    ops += [Operation("RY", (w,), (0.2 * w,), (0,)) for w in range(4)]
    plan = build_plan(ops, 4)
    merged = plan.operations(ops)
    assert [(o.name, o.wires) for o in merged[4:7]] == [("RZ", (2,)), ("IsingZZ", (0, 1)), ("MultiRZ", (1, 2, 3))]
    assert merged[5].params[0] == pytest.approx(0.4 - 0.6 + 0.1)
    assert len(plan.segments) == len(build_plan(ops[:4] + [ops[5], ops[4], ops[8]] + ops[10:], 4).segments)
    c = make_circuit(4, ops, [Measurement("expval", Observable.pauli({"ZXYZ": 1.0})),
                              Measurement("expval", Observable.pauli({"ZZ": 0.5}, wires=(1, 3)))])
    assert_close(final_state(c, dtype=dtype, plan=plan), reference_state(c), TOL[dtype] * 10)
    want = adjoint_jacobian(c, kernels="torch", fuse=False)
    assert want.shape[1] == 9
    for kernels in ("numba", "torch"):
        assert_close(adjoint_jacobian(c, dtype=dtype, kernels=kernels), want, TOL[dtype] * 10)
    assert build_plan(ops[:4] + [ops[5], ops[4], ops[8]] + ops[10:], 4).layout is None  # nothing to merge


def test_cached_plan_is_kept_per_structure(rng):
    """``cached_plan`` builds a structure's plan once per cache (parameter values never matter;
    a broadcast parameter or another fuse flag is another structure), and final_state uses it."""
    from qhybrid.sim.fuse import cached_plan

    n = 5
    ops = random_ops(n, 30, rng)
    again = [Operation(o.name, o.wires, tuple(0.5 * p for p in o.params), o.trainable) for o in ops]
    cache = Cache()
    plan = cached_plan(ops, n, cache=cache)
    assert cached_plan(again, n, cache=cache) is plan
    assert cached_plan(ops, n, fuse=False, cache=cache) is not plan
    assert cached_plan(ops, n) is not plan  # no cache: built anew
    broadcast = [Operation(o.name, o.wires, tuple(np.full(2, p) for p in o.params), o.trainable) for o in ops]
    assert cached_plan(broadcast, n, cache=cache) is not plan
    for c in (make_circuit(n, ops), make_circuit(n, again), make_circuit(n, broadcast)):
        assert_close(final_state(c, cache=cache), reference_state(c), 1e-10)
    assert sum(k[0] == "plan" for k in cache._items) == 3
