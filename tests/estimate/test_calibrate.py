"""The local calibration: measured once, cached by CPU model and threads, read back without measuring."""
from __future__ import annotations

import json

import pytest

from qhybrid.estimate import calibrate


def test_bandwidth_probe_measures_something():
    assert calibrate.measure_bandwidth(mib=16) > 0.1


def test_calibration_is_cached_by_machine_and_read_back(monkeypatch, _isolated_home):
    measured = []

    def measure(function, *args):
        measured.append(function)
        return {"calibrate.measure_qaoa": [2e-5, 3.0, 5.0, 6.0, 6.5], "calibrate.measure_qml": [3e-3, 5.0, 2.0, 9.0, 7.0]}[function]

    monkeypatch.setattr(calibrate, "isolated", measure)
    first = calibrate.local_calibration()
    assert measured == ["calibrate.measure_qaoa", "calibrate.measure_qml"]
    assert calibrate.cache_path() == _isolated_home / "calibration.json"
    stored = json.loads(calibrate.cache_path().read_text())
    assert list(stored) == [calibrate.machine_key()] and first.cpu_model in calibrate.machine_key()
    assert (first.qaoa_serial_gflops, first.qml_gflops) == (3.0, 9.0)

    again = calibrate.local_calibration()  # from the cache: nothing measured
    assert again == first and len(measured) == 2
    assert calibrate.cached_calibration() == first

    calibrate.local_calibration(refresh=True)
    assert len(measured) == 4


def test_another_machine_is_calibrated_anew(monkeypatch):
    monkeypatch.setattr(calibrate, "isolated", lambda f, *a: [1e-5, 1.0, 2.0, 2.0, 2.0] if "qaoa" in f else [1e-3, 1.0, 1.0, 1.0, 1.0])
    calibrate.local_calibration()
    monkeypatch.setattr(calibrate, "machine_key", lambda: "another CPU | 64 threads | v4")
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
        calibrate.isolated("calibrate.measure_bandwidth", -1)


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
