"""The QAOA job's optimiser: starts, convergence test, schedule, batched loop, checkpoint state."""
from __future__ import annotations

import json

import networkx as nx
import numpy as np

from qhybrid.qaoa import QAOA
from qhybrid.workloads import qaoa_optimize as opt


def test_ramp_and_interp():
    r = opt.ramp(4)
    assert r.shape == (2, 4) and np.all(np.diff(r[0]) > 0) and np.all(np.diff(np.abs(r[1])) < 0)
    assert np.all(r[0] > 0) and np.all(r[1] < 0)  # the annealing side (the module's Signs)
    x = np.array([[0.1, 0.3], [0.4, 0.2]])
    y = opt.interp(x, 3)
    np.testing.assert_allclose(y, [[0.1, 0.2, 0.3], [0.4, 0.3, 0.2]])
    np.testing.assert_allclose(opt.interp(np.array([[0.5], [0.2]]), 2), [[0.5, 0.5], [0.2, 0.2]])


def test_short_runs_start_below_a_random_cut():
    """A fixed-iteration run's starts (the p = 1 grid's best; the ramp and its copies above) and its energy after
    two steps beat a random cut's expectation, -m/2 (the ramp and grid with beta > 0 annealed towards the worst
    cut: above -m/2 at every start, ``cut 2 of 42`` after 2 iterations at 28 nodes)."""
    m = 24
    q = QAOA(nx.gnm_random_graph(16, m, seed=1967))
    for p in (1, 2, 3):
        schedule = opt.Schedule(layers=p, iterations=2)
        starts = opt.stage_starts(schedule, p, None, q.energy)
        assert np.all(q.energy(starts) < -m / 2 - 1), p
        assert opt.optimize(schedule, q.energy, q.energy_and_grad)["best_energy"] < -m / 2 - 1, p


def test_converged_needs_a_window_without_improvement():
    assert not opt.converged([3, 2, 1], window=3, tolerance=0.1)
    assert not opt.converged([5, 4, 3, 2, 1], window=3, tolerance=0.1)
    assert opt.converged([5, 1, 0.99, 0.995, 0.98], window=3, tolerance=0.1)


def test_depths():
    assert opt.depths(opt.Schedule(layers=3)) == [1, 2, 3]
    assert opt.depths(opt.Schedule(layers=3, iterations=5)) == [3]
    assert opt.depths(opt.Schedule(layers=3, init="seed")) == [3]


def test_grid_start_keeps_the_lowest_energies():
    q = QAOA(nx.cycle_graph(6))
    starts = opt.stage_starts(opt.Schedule(layers=1, starts=3), 1, None, q.energy)
    all_e = np.sort(q.energy(opt.grid(1967)))
    np.testing.assert_allclose(np.sort(q.energy(starts)), all_e[:3])


def test_layer_by_layer_starts_each_stage_from_the_last_answer():
    q = QAOA(nx.gnm_random_graph(8, 12, seed=2))
    warm = opt.optimize(opt.Schedule(layers=2), q.energy, q.energy_and_grad)
    cold = opt.optimize(opt.Schedule(layers=2, iterations=3, init="seed"), q.energy, q.energy_and_grad)
    first_p2 = warm["layers"].index(2)
    p1_best = min(warm["energies"][:first_p2])
    assert warm["energies"][first_p2] < cold["energies"][0] - 1  # a warm start, not |+>'s -m/2
    assert warm["best_energy"] <= p1_best  # p = 2 keeps at least what p = 1 found
    assert warm["best_params"].shape == (2, 2) and all(warm["converged"])
    assert warm["best_energy"] == min(q.energy(warm["best_params"][None]))


def test_state_round_trips_through_json_and_resumes_identically():
    q = QAOA(nx.gnm_random_graph(7, 9, seed=4))
    sched = opt.Schedule(layers=2, iterations=6)
    full = opt.optimize(sched, q.energy, q.energy_and_grad)
    saved = []
    opt.optimize(sched, q.energy, q.energy_and_grad,
                 on_step=lambda s: saved.append(json.dumps(opt.to_json(s))) if s["iteration"] == 3 else None)
    resumed = opt.optimize(sched, q.energy, q.energy_and_grad, state=opt.from_json(json.loads(saved[0])))
    np.testing.assert_allclose(resumed["energies"], full["energies"], atol=1e-12)
    np.testing.assert_allclose(resumed["best_params"], full["best_params"], atol=1e-12)
