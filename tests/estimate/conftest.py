"""Shared estimate fixtures: a fixed calibration (figures of this kind of machine), cached or passed in."""
from __future__ import annotations

import json

import pytest

from qhybrid.estimate.calibrate import Calibration, cache_path, machine_key


def fixed_calibration() -> Calibration:
    """Figures measured once on a 2-core AMD EPYC (so predictions in tests do not depend on the load)."""
    return Calibration(key=machine_key(), cpu_model="AMD EPYC", cores=2, peak_gflops=78.0, core_ghz=2.44,
                       bandwidth_gbs=50.0, thread_bandwidth_gbs=25.0, cache_bandwidth_gbs=60.0,
                       qaoa_iteration_s=1.2e-4, qaoa_call_s=1.6e-5, qaoa_serial_gflops=3.6,
                       qaoa_parallel_small_gflops=5.0, qaoa_parallel_gflops=6.5,
                       qaoa_parallel_large_gflops=7.5, qml_step_s=5e-3, qml_eval_s=1.5e-3, qml_small_gflops=2.5, qml_mid_gflops=1.0,
                       qml_gflops=2.5, qml_large_gflops=2.2, pool_wake_s=2e-5, pool_submit_s=5e-6, fresh_s_per_gb=1.2,
                       job_start_qaoa_s=1.5, job_start_qml_s=3.5, qaoa_diagonal_s=2.5e-9,
                       qaoa_first_s_per_byte=5e-10, qaoa_ending_s=6e-8, measured="2026-12-01T09:00:00+00:00", seconds=6.0)


@pytest.fixture
def calibration() -> Calibration:
    return fixed_calibration()


@pytest.fixture
def cached(_isolated_home) -> Calibration:
    """Write the fixed calibration into this test's cache (QHYBRID_HOME/calibration.json)."""
    from dataclasses import asdict

    cal = fixed_calibration()
    cache_path().write_text(json.dumps({cal.key: asdict(cal)}), encoding="utf-8")
    return cal


@pytest.fixture
def write_script(tmp_path):
    """Return ``write(name, body) -> Path``: a job script (dedented) in a fresh folder."""
    import textwrap

    def write(name: str, body: str):
        path = tmp_path / "scripts" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(body), encoding="utf-8")
        return path

    return write
