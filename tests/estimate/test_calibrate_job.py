"""The whole-job figures of the calibration: a tiny job's time and the QAOA job's size terms, measured."""
from __future__ import annotations

import math

import pytest

from qhybrid.estimate import calibrate, calibrate_job


def test_qaoa_parts_are_rates_per_amplitude():
    diagonal, first, ending = calibrate_job.measure_qaoa_parts(12)
    assert all(math.isfinite(x) and x >= 0 for x in (diagonal, first, ending))
    assert 0 < diagonal < 1e-6  # seconds per amplitude per edge: nanoseconds, not a whole call's time


@pytest.mark.slow
def test_startup_is_a_tiny_jobs_time_and_leaves_no_job_behind(_isolated_home):
    from qhybrid import Job

    seconds = calibrate.isolated("calibrate_job.measure_startup", "qaoa", 1)
    assert 0.2 < seconds < 120
    assert Job.list() == []  # the tiny job ran in a home of its own


@pytest.mark.slow
def test_in_job_factor_is_a_short_jobs_iteration_over_the_isolated_one(_isolated_home):
    from qhybrid import Job
    from qhybrid.jobs.instances import local_cores

    factor = calibrate.isolated("calibrate_job.measure_qaoa_in_job", 14, 8)
    assert 1.0 <= factor <= local_cores()  # held between 1 and the thread count
    assert Job.list() == []  # the job ran in a home of its own
