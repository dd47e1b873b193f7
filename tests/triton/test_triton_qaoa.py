"""The QAOA sweep on the Triton kernels (interpreter) against the torch reference in complex128:
Max-Cut on the half state with two passes per layer, Max-Clique with two high groups, and
non-integer weights (the direct cost phase)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from qhybrid.qaoa import torch_engine as te
from qhybrid.qaoa.problem import cost_diagonal, random_graph

P2 = np.array([[0.3, -0.7], [0.5, 0.2]])  # [gammas, betas], p = 2
P1 = np.array([[0.45], [-0.35]])
TOL = {"complex128": 1e-10, "complex64": 1e-5}


def _check(d, dtype, tiles, params=P2, *, state=True):
    from qhybrid.qaoa.triton_sweep import TritonSweep

    sweep = TritonSweep(d, symmetric=te.is_symmetric(d), dtype=dtype, device="cpu", tiles=tiles)
    (e, g), = sweep.energy_and_grad(params[None])
    we, wg = te.energy_and_grad(d, torch.tensor(params)[None], dtype=torch.complex128)
    scale = max(1.0, abs(float(we[0])))
    assert abs(e - float(we[0])) <= TOL[dtype] * scale
    assert np.abs(g - wg[0].numpy()).max() <= TOL[dtype] * scale * 10
    assert abs(sweep.energy(params[None])[0] - float(we[0])) <= TOL[dtype] * scale
    if state:
        got = sweep.state(params)
        want = te.forward(d, torch.tensor(params)[None], dtype=torch.complex128)[0].numpy()
        assert np.abs(got - want).max() <= TOL[dtype]
        (prob, index), _ = sweep.top(params, 2)  # the most likely state (ties: any of them)
        probs = np.abs(want) ** 2
        assert abs(prob - probs.max()) <= TOL[dtype] and abs(probs[index] - prob) <= TOL[dtype]


def test_maxcut_half_state_p2(triton_ops):
    """Max-Cut, 6 qubits on the 5-qubit half: a low and a high group, p = 2."""
    d = cost_diagonal(random_graph(6, 9, seed=3), "maxcut")
    _check(d, "complex128", triton_ops.Tiles(pass_bits=3, tile=16), state=False)


def test_maxclique_three_groups_p1(triton_ops):
    """Max-Clique (full state) of 5 qubits in three groups (two high), complex64, p = 1."""
    d = cost_diagonal(random_graph(5, 6, seed=3), "maxclique")
    _check(d, "complex64", triton_ops.Tiles(pass_bits=2, tile=8), P1, state=False)


def test_qaoa_direct_cost_phase(triton_ops, rng):
    """Weights off an integer grid: the cost is looked up as values (exp(-i gamma C[z]) in the
    kernel); the full state (both halves) and the most likely basis states."""
    edges = [(i, (i + 1) % 5, float(w)) for i, w in enumerate(rng.uniform(0.3, 1.7, size=5))]
    d = cost_diagonal(edges, "maxcut")
    assert d.values is not None
    _check(d, "complex128", triton_ops.Tiles(), P1)


@pytest.mark.slow
@pytest.mark.parametrize("problem", ["maxcut", "maxclique"])
@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
@pytest.mark.parametrize("n,bits", [(6, 10), (9, 4), (10, 3)])
def test_qaoa_sweep_sweep(triton_ops, problem, dtype, n, bits):
    d = cost_diagonal(random_graph(n, 2 * n, seed=n), problem)
    _check(d, dtype, triton_ops.Tiles(pass_bits=bits, tile=256), P2)


@pytest.mark.parametrize("n,bits,p", [(6, 3, 2), (5, 2, 1), (6, 10, 2)])
def test_traffic_counts_the_sweeps_passes(triton_ops, monkeypatch, n, bits, p):
    """``traffic`` (the estimate's count) against the launches an energy and an energy+gradient make:
    a pass reads (unless it starts from the uniform state) and writes each state it holds."""
    from qhybrid.qaoa import triton_sweep as ts

    seen = {"passes": 0, "units": 0}
    run_pass, pair_pass = triton_ops.run_pass, triton_ops.pair_pass

    def count_run(x, positions, **kw):
        seen["passes"] += 1
        seen["units"] += (kw.get("init") is None) + 1
        return run_pass(x, positions, **kw)

    def count_pair(x, y, positions, **kw):
        seen["passes"] += 1
        two = y is not None
        seen["units"] += 1 + (two and not kw.get("make_y", False)) + (1 + two) * kw.get("store", True)
        return pair_pass(x, y, positions, **kw)

    monkeypatch.setattr(ts.ops, "run_pass", count_run)
    monkeypatch.setattr(ts.ops, "pair_pass", count_pair)
    d = cost_diagonal(random_graph(n, 2 * n, seed=n), "maxcut")
    sweep = ts.TritonSweep(d, symmetric=True, dtype="complex128", device="cpu", tiles=triton_ops.Tiles(pass_bits=bits, tile=64))
    params = np.full((1, 2, p), 0.3)
    for grad in (False, True):
        seen.update(passes=0, units=0)
        sweep.energy_and_grad(params) if grad else sweep.energy(params)
        assert seen == ts.traffic(n - 1, p, bits, grad=grad)
