"""The whole job's time: the start-up, the size terms and a cold kernel cache counted beside the iterations."""
from __future__ import annotations

from dataclasses import replace

import pytest

import qhybrid.workloads.qaoa as wq
import qhybrid.workloads.qml as wm
from qhybrid.estimate import estimate_job, jobtime
from qhybrid.estimate.calibrate import local_machine
from qhybrid.estimate.work import qaoa_work
from qhybrid.jobs import InstanceConfig


@pytest.fixture
def warm(monkeypatch):
    """A kernel cache holding every kernel (no compilation counted)."""
    monkeypatch.setattr(jobtime, "kernels_cached", lambda workload, dtype="complex128": True)


def _qaoa(n: int, iterations: int = 12, starts: int = 4) -> dict:
    hp = {"n_nodes": str(n), "n_edges": str(int(1.5 * n)), "iterations": str(iterations), "starts": str(starts)}
    return {"device": "local:qhybrid/qhybrid.cpu", "source_module": wq.__file__, "entry_point": "qaoa",
            "hyperparameters": hp, "instance_config": InstanceConfig(instanceType="ml.m5.2xlarge")}


def _qml(n: int, ndata: int = 16, epochs: int = 1) -> dict:
    hp = {"nwires": str(n), "ndata": str(ndata), "epochs": str(epochs), "batch_size": "16"}
    return {"device": "local:qhybrid/qhybrid.cpu", "source_module": wm.__file__, "entry_point": "qml",
            "hyperparameters": hp, "instance_config": InstanceConfig(instanceType="ml.m5.2xlarge")}


def _local(kwargs, cal):
    return estimate_job(kwargs, instances=["ml.m5.2xlarge"], calibration=cal).row("local")


def test_the_measured_start_up_is_the_jobs_fixed_part(calibration, warm):
    # a tiny job's start-to-end time, measured once per machine, is what every job pays besides its work
    # (v6 added 5 s whatever the machine measured)
    slow = replace(calibration, job_start_qaoa_s=9.0)
    a, b = _local(_qaoa(10), calibration), _local(_qaoa(10), slow)
    assert b.fixed_seconds - a.fixed_seconds == pytest.approx(7.5)
    assert b.total_seconds - a.total_seconds == pytest.approx(7.5)
    ml = replace(calibration, job_start_qml_s=10.0)
    assert _local(_qml(8), ml).total_seconds - _local(_qml(8), calibration).total_seconds == pytest.approx(6.5)


def test_the_in_job_factor_scales_this_machines_qaoa_iterations_only(calibration, warm):
    # a short real job's iterations ran 1.8x the calibration's timing of the same iteration (on a VM whose
    # threads did not always have a core each): this machine's QAOA iterations are priced so, with a note;
    # the fixed part and other instance types are not (v7 priced the isolated timing: jobs ~2x longer)
    slow = replace(calibration, qaoa_job_factor=1.8)
    est = estimate_job(_qaoa(20), instances=["ml.m5.2xlarge"], calibration=calibration)
    est2 = estimate_job(_qaoa(20), instances=["ml.m5.2xlarge"], calibration=slow)
    a, b = est.row("local"), est2.row("local")
    assert b.seconds_per_iteration == pytest.approx(1.8 * a.seconds_per_iteration)
    assert b.fixed_seconds == pytest.approx(a.fixed_seconds)
    assert any("1.80x the isolated timing" in n for n in b.notes) and not any("isolated" in n for n in a.notes)
    assert est2.row("ml.m5.2xlarge").seconds_per_iteration == est.row("ml.m5.2xlarge").seconds_per_iteration
    ml = replace(calibration, qaoa_job_factor=1.8)
    assert _local(_qml(8), ml).total_seconds == pytest.approx(_local(_qml(8), calibration).total_seconds)


def test_qaoa_fixed_part_grows_with_the_graph(calibration, warm):
    # the cost diagonal (2^n amplitudes x edges), the buffers faulted in, the ending over 2^(n-1):
    # at 24 nodes the job's fixed part is past its start-up by the model's terms, not a constant
    row = _local(_qaoa(24), calibration)
    w = qaoa_work(24, 2)
    size = (2.5e-9 * 2**24 * 36 + 5e-10 * w.working_set_bytes + 6e-8 * 2**23)
    assert row.fixed_seconds == pytest.approx(1.5 + size)
    small = _local(_qaoa(16), calibration)
    assert small.fixed_seconds < 1.6 < row.fixed_seconds
    # and the total is the fixed part plus every batched start's iterations and the final evaluations
    # (the 4 starts' energies and the final state: 5 forward passes, half a unit each)
    assert row.total_seconds == pytest.approx(row.fixed_seconds + row.seconds_per_iteration * 12 * 50.5 / 48)


def test_qml_buffers_are_faulted_in_once(calibration, warm):
    row = _local(_qml(20), calibration)
    buffers = row.needed_bytes - 400 * 2**20
    assert row.fixed_seconds == pytest.approx(3.5 + buffers / 1e9 * 1.2)  # not measured: a temporary's rate
    touched = _local(_qml(20), replace(calibration, touch_s_per_gb=2.5))
    assert touched.fixed_seconds == pytest.approx(3.5 + buffers / 1e9 * 2.5)  # the layer's buffers' own


def test_an_empty_kernel_cache_adds_the_compilation_here_only(calibration, monkeypatch):
    monkeypatch.setattr(jobtime, "kernels_cached", lambda workload, dtype="complex128": False)
    est = estimate_job(_qaoa(12), instances=["ml.m5.2xlarge", "ml.c5.xlarge"], calibration=calibration)
    monkeypatch.setattr(jobtime, "kernels_cached", lambda workload, dtype="complex128": True)
    warm_est = estimate_job(_qaoa(12), instances=["ml.m5.2xlarge", "ml.c5.xlarge"], calibration=calibration)
    extra = est.row("local").total_seconds - warm_est.row("local").total_seconds
    assert extra == pytest.approx(jobtime.COMPILE_S["qaoa"])
    assert any("compiles them" in n for n in est.row("local").notes)
    assert est.row("ml.m5.2xlarge").total_seconds > warm_est.row("ml.m5.2xlarge").total_seconds  # the job's own
    assert est.row("ml.c5.xlarge").total_seconds == pytest.approx(warm_est.row("ml.c5.xlarge").total_seconds)


def test_other_machines_scale_the_fixed_part_by_core_speed(calibration, warm):
    est = estimate_job(_qaoa(20), instances=["ml.m5.2xlarge", "ml.c5.xlarge"], calibration=calibration)
    from qhybrid.estimate.hardware import instance_machine
    from qhybrid.estimate.model import _core_ratio
    from qhybrid.jobs.instances import get_instance

    here, there = est.row("local"), est.row("ml.c5.xlarge")
    ratio = _core_ratio(instance_machine(get_instance("ml.c5.xlarge")), calibration)
    assert ratio != pytest.approx(_core_ratio(local_machine(calibration), calibration))
    assert there.fixed_seconds == pytest.approx(here.fixed_seconds / ratio)


def test_kernels_cached_looks_for_the_files_the_job_compiles(monkeypatch, tmp_path):
    """``kernels_cached`` and the job's ``numba_load.compile_ahead`` look for the same index files (the
    estimate looked for ``batched.*`` after the kernels moved to ``batchedkernels``: every QML row
    counted 10 s of compiling that the job never did)."""
    from qhybrid import kernel_cache
    from qhybrid.workloads import numba_load

    monkeypatch.setattr(kernel_cache, "cache_dir", lambda: tmp_path)
    assert not jobtime.kernels_cached("qml")
    (tmp_path / "sim").mkdir()
    for name in numba_load.QML_KERNELS:  # as numba names them: module stem, function, line
        (tmp_path / "sim" / f"batchedkernels.{name}_serial-100.py311.nbi").write_bytes(b"")
    assert jobtime.kernels_cached("qml")
