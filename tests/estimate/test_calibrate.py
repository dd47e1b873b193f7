"""The local calibration: measured once, cached by CPU model and threads, read back without measuring."""
from __future__ import annotations

import json

import pytest

from qhybrid.estimate import calibrate, calibrate_qml


def test_bandwidth_probe_measures_something():
    assert calibrate.measure_bandwidth(mib=16) > 0.1 and calibrate.measure_bandwidth(mib=16, threads=2) > 0.1


MEASURED = {"calibrate.measure_qaoa": [1e-4, 2e-5, 3.0, 5.0, 6.0, 6.5], "calibrate.measure_dispatch": [2e-5, 5e-6],
            "calibrate_qml.measure_qml": [3e-3, 5.0, 2.0, 9.0, 7.0, 1e-3, 1.25, 6.0, 2.5],
            "calibrate_job.measure_qaoa_parts": [2e-9, 4e-10, 5e-8], "calibrate_job.measure_startup": 1.75,
            "calibrate_job.measure_qaoa_in_job": 1.4}
ASKED = ["calibrate.measure_qaoa", "calibrate.measure_dispatch", "calibrate_qml.measure_qml",
         "calibrate_job.measure_qaoa_parts", "calibrate_job.measure_startup", "calibrate_job.measure_startup",
         "calibrate_job.measure_qaoa_in_job"]


@pytest.fixture
def fake_measurements(monkeypatch):
    """The calibration's measurements replaced by fixed figures (the names asked, in order, recorded)."""
    measured = []

    def measure(function, *args):
        measured.append(function)
        return MEASURED[function]

    monkeypatch.setattr(calibrate, "isolated", measure)
    monkeypatch.setattr(calibrate, "measure_bandwidth", lambda mib=128, threads=1: (40.0 if mib < 128 else 20.0) * threads)
    return measured


def test_calibration_is_cached_by_machine_and_read_back(fake_measurements, _isolated_home):
    measured = fake_measurements
    first = calibrate.local_calibration()
    assert measured == ASKED
    assert not first.nominal and (first.pool_wake_s, first.pool_submit_s) == (2e-5, 5e-6) and first.qaoa_iteration_s == 1e-4
    assert first.cache_bandwidth_gbs == 40.0 and first.thread_bandwidth_gbs == 20.0
    assert calibrate.cache_path() == _isolated_home / "calibration.json"
    stored = json.loads(calibrate.cache_path().read_text())
    assert list(stored) == [calibrate.machine_key()] and first.cpu_model in calibrate.machine_key()
    assert (first.qaoa_serial_gflops, first.qml_gflops, first.qml_eval_s) == (3.0, 9.0, 1e-3)
    assert (first.job_start_qaoa_s, first.job_start_qml_s, first.qaoa_diagonal_s, first.qaoa_ending_s) == (
        1.75, 1.75, 2e-9, 5e-8)
    assert first.qaoa_job_factor == 1.4
    assert (first.fresh_s_per_gb, first.qml_huge_gflops, first.touch_s_per_gb) == (1.25, 6.0, 2.5)

    again = calibrate.local_calibration()  # from the cache: nothing measured
    assert again == first and len(measured) == len(ASKED)
    assert calibrate.cached_calibration() == first

    calibrate.local_calibration(refresh=True)
    assert len(measured) == 2 * len(ASKED)


def test_another_machine_is_calibrated_anew(monkeypatch, fake_measurements):
    calibrate.local_calibration()
    monkeypatch.setattr(calibrate, "machine_key", lambda: "another CPU | 64 threads | v5")
    assert calibrate.cached_calibration() is None
    calibrate.local_calibration()
    assert len(json.loads(calibrate.cache_path().read_text())) == 2


def test_cache_without_qhybrid_home(monkeypatch, tmp_path):
    monkeypatch.delenv("QHYBRID_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert calibrate.cache_path() == tmp_path / ".cache" / "qhybrid" / "calibration.json"


def test_isolated_runs_in_a_fresh_interpreter():
    assert calibrate.isolated("calibrate.machine_key") == calibrate.machine_key()
    from qhybrid.errors import JobError

    with pytest.raises(JobError, match="estimate probe"):
        calibrate.isolated("calibrate.cache_mib", 1)


def test_concurrent_stores_keep_each_others_entries(_isolated_home):
    """Processes calibrating or probing at once (each reading the cache before the other wrote) lose nothing."""
    import subprocess
    import sys

    code = ("import sys; from qhybrid.estimate import calibrate\n"
            "for i in range(30): calibrate.store(f'{sys.argv[1]} {i}', {'i': i})\n")
    procs = [subprocess.Popen([sys.executable, "-c", code, name]) for name in ("a", "b", "c")]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0]
    stored = json.loads(calibrate.cache_path().read_text())
    assert {f"{n} {i}" for n in "abc" for i in range(30)} <= set(stored)


def test_fits_keep_every_term_non_negative():
    assert calibrate.nonnegative_fit([[1, 0], [1, 1], [1, 2]], [1.0, 2.0, 3.0]) == pytest.approx([1.0, 1.0])
    assert calibrate.nonnegative_fit([[1, 0], [1, 1], [1, 2]], [3.0, 2.0, 1.0]) == pytest.approx([2.0, 0.0])


def _local(cal):
    from dataclasses import replace

    from qhybrid.estimate.calibrate import local_machine

    machine = local_machine(cal)
    return replace(cal, cores=machine.cores), machine


def test_qaoa_model_returns_the_times_it_was_calibrated_on(calibration):
    """The overheads and the one-thread rate are solved together (none counted twice): the model gives back
    each calibration point's seconds, and the per-iteration and per-call terms are the ones timed in."""
    from dataclasses import replace

    from qhybrid.estimate import model
    from qhybrid.estimate.work import qaoa_work

    iteration, call, rate = 1.5e-4, 2e-5, 3.2e9
    times = {(n, p): iteration + call * (w := qaoa_work(n, p)).calls + w.flops / rate for n, p in calibrate.QAOA_SMALL}
    times |= {(18, 2): 9e-3, (20, 2): 2.2e-2, (22, 2): 8e-2}
    figures = calibrate.qaoa_figures(times)
    assert figures[:3] == pytest.approx((iteration, call, rate / 1e9))
    names = ("qaoa_iteration_s", "qaoa_call_s", "qaoa_serial_gflops", "qaoa_parallel_small_gflops",
             "qaoa_parallel_gflops", "qaoa_parallel_large_gflops")
    cal, machine = _local(replace(calibration, **dict(zip(names, figures))))
    for n in (16, 18, 20, 22):
        got = model.qaoa_cpu_seconds(qaoa_work(n, 2), machine, cal, simulated_qubits=n - 1)
        assert got == pytest.approx(times[(n, 2)], rel=1e-9), n
    tiny = model.qaoa_cpu_seconds(qaoa_work(4, 3), machine, cal, simulated_qubits=3)
    assert tiny == pytest.approx(iteration + 13 * call, rel=0.01)  # p = 3: 13 calls, the arithmetic negligible


def test_qml_model_returns_the_times_it_was_calibrated_on(calibration):
    """Rates per busy thread are taken net of the fixed step, the thread hand-offs and the serial copies,
    which the model adds back: each calibration point's seconds come back."""
    from dataclasses import replace

    from qhybrid.estimate import model
    from qhybrid.estimate.work import qml_work

    from qhybrid.estimate.work import qml_eval_work

    times = {4: 4e-3, 8: 5.2e-3, 10: 6.5e-3, 12: 1.0e-2, 16: 0.1}
    cal, machine = _local(calibration)
    figures = calibrate_qml.qml_figures(times, cores=machine.cores, wake_s=cal.pool_wake_s, submit_s=cal.pool_submit_s,
                                    cache_gbs=machine.cache_bandwidth_gbs, dram_gbs=machine.thread_bandwidth_gbs,
                                    l3_bytes=machine.l3_bytes, eval_s=1.7e-3, fresh_s_per_gb=cal.fresh_s_per_gb)
    cal = replace(cal, **dict(zip(("qml_step_s", "qml_small_gflops", "qml_mid_gflops", "qml_gflops",
                                   "qml_large_gflops", "qml_eval_s"), figures)))
    for n in (8, 10, 12, 16):
        got = model.qml_cpu_seconds(qml_work(n, 16), machine, cal, batch=16, n_wires=n)
        assert got == pytest.approx(times[n], rel=1e-9), n
    ev = model.qml_eval_cpu_seconds(qml_eval_work(4, calibrate_qml.QML_EVAL), machine, cal, samples=calibrate_qml.QML_EVAL,
                                    n_wires=4)
    assert 0 < cal.qml_eval_s < 1.7e-3 and ev == pytest.approx(1.7e-3, rel=1e-9)  # the evaluation's time comes back


def test_nominal_calibration_measures_nothing(monkeypatch, _isolated_home):
    def refuse(*args, **kwargs):
        raise AssertionError("measured")

    monkeypatch.setattr(calibrate, "isolated", refuse)
    monkeypatch.setattr(calibrate, "measure_bandwidth", refuse)
    cal = calibrate.nominal_calibration()
    assert cal.nominal and cal.measured == "" and cal.key == calibrate.machine_key()
    assert min(v for v in vars(cal).values() if isinstance(v, float) and v != cal.seconds) > 0
    assert not calibrate.cache_path().exists() and calibrate.cached_calibration() is None
