"""The QAOA run's work units: its optimizer steps and the evaluations past them."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from qhybrid.estimate.counting import qaoa_ending_units, work_units


def _job(**settings):
    base = dict(starts=4, iterations=2, n_layers=2, init="interp")
    return SimpleNamespace(workload="qaoa", settings=SimpleNamespace(**{**base, **settings}))


@pytest.mark.parametrize("starts,want", [(1, 1.0), (4, 2.5)])
def test_fixed_iterations_end_with_each_starts_energy_and_the_state(starts, want):
    """N iterations at p end with one forward pass a start (the final energies) and one for the state (the
    ranking), each half an iteration's unit: one start costs one unit as before, four starts 2.5."""
    job = _job(starts=starts)
    assert qaoa_ending_units(job.settings) == want
    assert work_units(job) == starts * 2 + want


def test_a_run_to_convergence_ends_every_stage_and_seed_runs_one_set():
    expected = SimpleNamespace()  # only its presence matters here
    assert qaoa_ending_units(_job(n_layers=3).settings, expected) == (4 * 2 + 1) / 2  # depths 1..3 at d / p
    assert qaoa_ending_units(_job(init="seed").settings, expected) == 1.0
