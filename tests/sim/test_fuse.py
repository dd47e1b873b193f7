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
    for fast in (True, False):
        got = final_state(c, dtype=dtype, fast=fast, fuse=True)
        assert_close(got.to(torch.complex128), ref, TOL[dtype] * 10)


def test_broadcast_fused_equals_unfused(rng):
    c = make_circuit(5, random_ops(5, 40, rng, batch=3))
    assert c.batch_size == 3
    assert_close(final_state(c, fuse=True), reference_state(c), 1e-10)


def test_single_qubit_runs_become_one_layer():
    ops = [Operation("RX", (0,), (0.1,)), Operation("RY", (0,), (0.2,)), Operation("RZ", (0,), (0.3,)),
           Operation("Hadamard", (1,)), Operation("S", (1,))]
    kops = lower(ops, 2)
    assert len(kops) == 1 and kops[0].kind == "layer" and kops[0].data.shape[0] == 2


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
    from qhybrid.sim.apply import apply_kop
    from qhybrid.sim.fuse import kop_for

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
    for fast, cache in ((True, Cache()), (True, None), (False, None)):
        back = state.clone()
        apply_kop(back, kops[0].inverse(), n, fast=fast, cache=cache)
        unwound = state.clone()
        for op in reversed(perm):
            apply_kop(unwound, kop_for(op, n, dtype=torch.complex128, device="cpu"), n, fast=False)
        assert_close(back, unwound, 1e-12)
