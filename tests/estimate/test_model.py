"""Seconds from work and machines: the roofline's terms, GPU precision, the all-reduce."""
from __future__ import annotations

import pytest

from qhybrid.estimate import calibrate, hardware, model, work
from qhybrid.jobs.instances import get_instance


def test_interpolation_is_held_at_the_ends():
    assert model._between(10, 12, 1.0, 16, 3.0) == 1.0
    assert model._between(14, 12, 1.0, 16, 3.0) == 2.0
    assert model._between(20, 12, 1.0, 16, 3.0) == 3.0


def test_memory_streams_at_the_bandwidth_of_the_working_sets_home(calibration):
    m = hardware.instance_machine(get_instance("ml.m5.2xlarge"))
    assert m.cache_bandwidth_gbs > m.bandwidth_gbs / m.cores and m.thread_bandwidth_gbs <= m.bandwidth_gbs
    in_cache = model._memory_seconds(1e9, m.l3_bytes // 2, m, threads=4)
    assert in_cache == pytest.approx(1e9 / (4 * m.cache_bandwidth_gbs * 1e9))
    assert model._memory_seconds(1e9, m.l3_bytes // 2, m, threads=1) == pytest.approx(4 * in_cache)
    assert model._memory_seconds(1e9, m.l3_bytes * 2, m, threads=4) == pytest.approx(1e9 / (m.bandwidth_gbs * 1e9))
    assert in_cache < model._memory_seconds(1e9, m.l3_bytes * 2, m, threads=4)


def test_faster_cores_are_faster(calibration):
    w = work.qaoa_work(14, 2)  # one thread
    slow = hardware.instance_machine(get_instance("ml.m4.xlarge"))  # Haswell, AVX2
    fast = hardware.instance_machine(get_instance("ml.c5.xlarge"))  # Skylake-SP, AVX-512
    assert model.qaoa_cpu_seconds(w, fast, calibration, simulated_qubits=13) < \
        model.qaoa_cpu_seconds(w, slow, calibration, simulated_qubits=13)


def test_gpu_single_precision_uses_the_fp32_peak():
    t4 = hardware.instance_machine(get_instance("ml.g4dn.xlarge"))  # FP64 is 1/32 of FP32 on a T4
    double = model.gpu_seconds(work.qaoa_work(26, 4, gpu=True), t4)
    single = model.gpu_seconds(work.qaoa_work(26, 4, dtype="complex64", gpu=True), t4)
    assert single < double / 4


def test_all_reduce_grows_with_ranks_and_crosses_the_network():
    p3 = hardware.instance_machine(get_instance("ml.p3.16xlarge"))
    assert model.allreduce_seconds(1000, world=1, instance_count=1, machine=p3, gpu=True) == 0.0
    inside = model.allreduce_seconds(10**7, world=8, instance_count=1, machine=p3, gpu=True)
    across = model.allreduce_seconds(10**7, world=32, instance_count=4, machine=p3, gpu=True)
    assert 0 < inside < across


def test_qml_busy_threads_follow_the_kernels_parallel_threshold(calibration):
    from qhybrid.estimate.calibrate_qml import qml_threads
    from qhybrid.sim.registry import PARALLEL_MIN

    assert qml_threads(10, 16, 4) == 1 and 16 * 2**10 < PARALLEL_MIN  # one thread: the kernels run serially
    assert qml_threads(11, 16, 4) == 4 and qml_threads(11, 16, 1) == 1
    assert qml_threads(15, 2, 4) == 2 and qml_threads(16, 2, 4) == 4  # a sample a thread; past GATE_SPLIT_MIN, gates split
    big = hardware.instance_machine(get_instance("ml.m5.24xlarge"))
    small = hardware.instance_machine(get_instance("ml.m5.large"))
    serial = [model.qml_cpu_seconds(work.qml_work(8, 16), m, calibration, batch=16, n_wires=8) for m in (big, small)]
    parallel = [model.qml_cpu_seconds(work.qml_work(14, 16), m, calibration, batch=16, n_wires=14) for m in (big, small)]
    assert serial[0] == pytest.approx(serial[1], rel=0.2)  # many cores do not help a serial step
    assert parallel[0] < parallel[1] / 3


def test_qml_fixed_step_dominates_small_sizes(calibration):
    m = calibrate.local_machine(calibration)
    t4 = model.qml_cpu_seconds(work.qml_work(4, 16), m, calibration, batch=16, n_wires=4)
    assert calibration.qml_step_s <= t4 < 1.1 * calibration.qml_step_s
    rates = [model._qml_rate_per_thread(calibration, n) for n in (6, 8, 9, 10, 11, 12, 16, 20)]
    assert rates[0] == rates[1] == calibration.qml_small_gflops and rates[-1] == calibration.qml_large_gflops
    assert min(calibration.qml_small_gflops, calibration.qml_mid_gflops) <= rates[2] <= \
        max(calibration.qml_small_gflops, calibration.qml_mid_gflops)


def test_qml_rate_past_the_cache_is_the_rate_measured_there(calibration):
    """Past 16 wires the rate per thread is the 16-wire one while the chunk's states fit the last-level
    cache and the one measured past it (``qml_huge_gflops``, when lower) once they do not: a 26-wire
    step takes longer per flop than a 22-wire one on a machine with a 480 MiB L3, as measured."""
    from dataclasses import replace

    cal = replace(calibration, qml_huge_gflops=0.75 * calibration.qml_large_gflops)
    assert model._qml_rate_per_thread(cal, 22) == calibration.qml_large_gflops
    assert model._qml_rate_per_thread(cal, 22, past_cache=True) == cal.qml_huge_gflops
    assert model._qml_rate_per_thread(cal, 16, past_cache=True) == calibration.qml_large_gflops  # calibrated there
    unmeasured = replace(calibration, qml_huge_gflops=0.0)
    assert model._qml_rate_per_thread(unmeasured, 26, past_cache=True) == calibration.qml_large_gflops
    faster = replace(calibration, qml_huge_gflops=2 * calibration.qml_large_gflops)  # noise: never above
    assert model._qml_rate_per_thread(faster, 26, past_cache=True) == calibration.qml_large_gflops
    m = replace(calibrate.local_machine(cal), l3_bytes=480 * 2**20, cores=2)

    def per_flop(n):
        w = work.qml_work(n, 2, chunk=2)
        return model.qml_cpu_seconds(w, m, cal, batch=2, n_wires=n, chunk=2) / w.flops

    assert per_flop(26) > 1.25 * per_flop(22)  # 4 GiB of states against 256 MiB: past the L3


def test_the_calibration_times_a_step_past_the_cache():
    """The step timed for ``qml_huge_gflops`` has states of at least twice the L3 (within 20-24 wires)."""
    assert work.qml_huge_wires(480 * 2**20, 2) == 24  # the 2-core Xeon: 1 GiB of states
    assert work.qml_huge_wires(32 * 2**20, 4) == 20  # a 32 MiB L3: 20 wires are past it already
    assert work.qml_huge_wires(8 * 2**30, 4) == 24  # never more than 24 wires, whatever the cache
    for l3, batch in ((480 * 2**20, 2), (64 * 2**20, 2), (100 * 2**20, 3)):
        n = work.qml_huge_wires(l3, batch)
        assert 2 * batch * 16 << n >= 2 * l3 and (n == 20 or 2 * batch * 16 << (n - 1) < 2 * l3)


def test_qaoa_large_factor_is_one_where_calibrated_and_scales_past_it(calibration):
    """Up to 21 simulated qubits (the calibration's points) the flop model stands; past them its arithmetic is
    scaled by the measured factor (held past the last point)."""
    from qhybrid.estimate.calibrate import local_machine
    from qhybrid.estimate.work import qaoa_work

    assert model.qaoa_large_factor(15) == model.qaoa_large_factor(21) == 1.0
    last = model.QAOA_LARGE_FACTOR[-1]
    assert model.qaoa_large_factor(last[0] + 5) == last[1]
    assert model.qaoa_large_factor(24) == dict(model.QAOA_LARGE_FACTOR)[24]
    machine = local_machine(calibration)
    w = qaoa_work(28, 2)
    plain = w.flops / (calibration.qaoa_parallel_large_gflops * 1e9)
    got = model.qaoa_cpu_seconds(w, machine, calibration, simulated_qubits=27)
    assert got == pytest.approx(plain * model.qaoa_large_factor(27), rel=0.05)  # the arithmetic, the overheads small
