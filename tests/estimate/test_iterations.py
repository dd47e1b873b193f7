"""The expected length of a QAOA run to convergence: the measured model, its range, caps and caveats."""
from __future__ import annotations

import statistics

import pytest

from qhybrid.estimate.iterations import FIRST_STAGE_MEAN, RANGE, STAGE_MEAN, qaoa_iterations

DEFAULT = {"max_iterations": 300, "window": 10, "tolerance": 1e-3, "stepsize": 0.05}


@pytest.mark.parametrize("layers", [1, 2, 3])
def test_a_stage_a_depth_at_the_measured_means(layers):
    e = qaoa_iterations(layers=layers, **DEFAULT)
    total = FIRST_STAGE_MEAN + STAGE_MEAN * (layers - 1)  # the grid's stage, then INTERP's
    assert (e.iterations, e.per_stage, e.stages) == (total, STAGE_MEAN, layers)
    assert e.lengths() == [FIRST_STAGE_MEAN] + [STAGE_MEAN] * (layers - 1)
    assert e.low < e.iterations < e.high and not e.caveats
    assert (e.low, e.high) == (max(11 * layers, int(RANGE[0] * total)), round(RANGE[1] * total + 0.5))


def test_capped_by_max_iterations_and_floored_by_the_window():
    e = qaoa_iterations(layers=2, **{**DEFAULT, "max_iterations": 20})
    assert (e.iterations, e.high, e.low) == (40, 40, 24)  # both stages capped at 20; 0.6 of 40
    tight = qaoa_iterations(layers=1, **{**DEFAULT, "window": 30})
    assert tight.low == 31  # a stage converges only after more than `window` iterations
    assert any("window 30" in c for c in tight.caveats)


def test_seed_start_runs_one_stage_and_says_it_was_not_measured():
    e = qaoa_iterations(layers=3, init="seed", **DEFAULT)
    assert e.stages == 1 and e.iterations == STAGE_MEAN and any("init seed" in c for c in e.caveats)
    assert e.lengths() == [STAGE_MEAN]
    assert any("24 is past" in c for c in qaoa_iterations(layers=2, n_qubits=24, **DEFAULT).caveats)


def test_weighted_counts_depths_by_their_cost_and_the_opening_grid():
    e = qaoa_iterations(layers=2, **DEFAULT)
    # depth 1 (21 iterations) costs half an iteration at depth 2 (33); 4 starts batched; 32 grid energies
    # = 8 iterations at p = 2
    assert e.weighted(layers=2, starts=4, grid=32, count=54) == 4 * (21 + 2 * 33) // 2 + 8
    assert e.weighted(layers=2, starts=4, grid=32, count=108) == 4 * (21 + 2 * 33) + 8  # shared as expected
    one = qaoa_iterations(layers=2, init="seed", **DEFAULT)
    assert one.weighted(layers=2, starts=1, grid=32, count=33) == 33  # one stage at p, no grid


@pytest.mark.slow
def test_the_model_holds_for_the_real_optimizer():
    """The job's own schedule on small graphs: the mean length lies in the model's 80 % range (fails
    when the optimizer's defaults change enough to make the estimate's count wrong)."""
    import networkx as nx

    import qhybrid.workloads.qaoa as w
    from qhybrid.workloads import qaoa_optimize as opt

    totals = []
    for seed in range(4):
        s = w.parse_settings({"n_nodes": "10", "n_edges": "15", "n_layers": "1", "seed": str(seed)})
        sim = w.make_simulator(nx.gnm_random_graph(10, 15, seed=seed), s, "local:qhybrid/qhybrid.cpu")
        state = opt.optimize(s.schedule(), sim.energy, sim.energy_and_grad)
        totals.append(state["iteration"])
    e = qaoa_iterations(layers=1, max_iterations=s.max_iterations, window=s.window, tolerance=s.tolerance,
                        stepsize=s.stepsize)
    assert e.low <= statistics.mean(totals) <= e.high, totals
