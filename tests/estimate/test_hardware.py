"""The machine of each instance type, from the catalogue and the rules."""
from __future__ import annotations

from qhybrid.estimate import calibrate, hardware
from qhybrid.jobs.instances import catalogue, get_instance


def test_gpu_instance_from_the_catalogue():
    m = hardware.instance_machine(get_instance("ml.p3.16xlarge"))
    assert (m.gpus, m.gpu_model, m.gpu_bandwidth_gbs) == (8, "V100", 900.0)
    assert m.gpu_memory_bytes == 16 * 2**30 and m.gpu_fp64_gflops == 7800.0
    assert m.gpu_link_gbs == hardware.GPU_LINK_GBS["V100"] and m.cores == 32
    assert m.assumed == ()


def test_blank_host_cpu_is_assumed_and_said():
    m = hardware.instance_machine(get_instance("ml.g4dn.xlarge"))
    assert any("Cascade Lake" in a for a in m.assumed)
    assert m.peak_gflops > 0 and m.bandwidth_gbs > 0


def test_bandwidth_is_a_share_of_the_socket():
    small = hardware.instance_machine(get_instance("ml.m5.large"))
    big = hardware.instance_machine(get_instance("ml.m5.24xlarge"))
    assert small.bandwidth_gbs < big.bandwidth_gbs <= 2 * 128
    assert big.peak_gflops / small.peak_gflops == 48


def test_every_instance_has_a_machine():
    for inst in catalogue().values():
        m = hardware.instance_machine(inst)
        assert m.memory_bytes > 0 and m.core_gflops > 0
        assert (m.gpu_fp64_gflops > 0) == (inst.gpus > 0)


def test_local_machine_without_calibration_uses_its_nominal_peak():
    m = calibrate.local_machine(None)
    assert m.name == "local" and m.peak_gflops > 0 and m.memory_bytes > 0
    assert hardware.cpu_model()
