"""The estimate's GPU side (``estimate/gpu.py``): which kernel set a type's GPU runs (asked of
``sim.triton.status``, not decided here), the Triton work counted from the kernels' own pass
rules, and the rows that say which set they model."""
from __future__ import annotations

import json

import pytest

from qhybrid.estimate import estimate_job, gpu, to_json, work
from qhybrid.estimate.hardware import instance_machine
from qhybrid.jobs.instances import get_instance
from qhybrid.sim.triton.status import MIN_CAPABILITY

from .test_predict import qaoa


@pytest.mark.parametrize("itype,path", [("ml.p3.2xlarge", "torch"), ("ml.g4dn.xlarge", "torch"),
                                        ("ml.p4d.24xlarge", "triton"), ("ml.g6.xlarge", "triton")])
def test_kernel_path_of_a_type_follows_tritons_minimum(itype, path):
    machine = instance_machine(get_instance(itype))
    name, why = gpu.kernel_path(machine)
    assert name == path and machine.gpu_model in why
    assert (tuple(machine.gpu_capability) >= MIN_CAPABILITY) == (path == "triton")


def test_unknown_capability_is_the_torch_reference():
    from dataclasses import replace

    machine = replace(instance_machine(get_instance("ml.p4d.24xlarge")), gpu_capability=())
    assert gpu.kernel_path(machine)[0] == "torch"


def test_triton_work_counts_fewer_bytes_than_torch():
    tri, ref = gpu.qaoa_work(24, 2), gpu.qaoa_work(24, 2, kernels="torch")
    assert ref == work.qaoa_work(24, 2, gpu=True)
    assert tri.passes == 48 and tri.bytes < ref.bytes / 3
    q_tri, q_ref = gpu.qml_work(20, 8, chunk=4), gpu.qml_work(20, 8, chunk=4, states=5, kernels="torch")
    assert q_tri.bytes < q_ref.bytes and q_tri.memory_bytes < q_ref.memory_bytes
    assert gpu.qml_work(20, 8, grad=False).bytes < q_tri.bytes


def test_gpu_rows_say_which_kernels_they_model(calibration):
    est = estimate_job(qaoa(n=24, instance="ml.p3.2xlarge", device="local:qhybrid/qhybrid.gpu"),
                       instances=["ml.p4d.24xlarge", "ml.m5.2xlarge"], calibration=calibration)
    rows = {r["target"]: r for r in json.loads(to_json(est))["rows"]}
    assert rows["ml.p3.2xlarge"]["kernels"] == "torch" and rows["ml.p4d.24xlarge"]["kernels"] == "triton"
    assert rows["ml.m5.2xlarge"]["kernels"] == ""
    assert any("below Triton's documented minimum" in n for n in rows["ml.p3.2xlarge"]["notes"])
    a100, v100 = est.row("ml.p4d.24xlarge"), est.row("ml.p3.2xlarge")
    assert a100.seconds_per_iteration < v100.seconds_per_iteration
