"""Pre-flight at submission: what can only fail once launched is refused before anything is written."""
from __future__ import annotations

from pathlib import Path

import pytest
from jobkit import CPU, nothing_written

import qhybrid.workloads
from qhybrid import InstanceConfig, Job
from qhybrid.errors import DeviceError, MemoryLimitError, SpecError

WORKLOADS = Path(qhybrid.workloads.__file__).parent


def _refused(home, exc, match, **kwargs):
    with pytest.raises(exc, match=match) as err:
        Job.create(**kwargs)
    assert "\n" not in str(err.value) and nothing_written(home)


@pytest.mark.parametrize("device", ["local:qhybrid/qhybrid.gpu", "local:pennylane/lightning.gpu"])
def test_gpu_device_without_cuda_on_the_local_backend(home, write_script, monkeypatch, device):
    """lightning.gpu installed (faked here) but no GPU visible: the same line as qhybrid.gpu."""
    from qhybrid import devices

    real = devices.available_devices
    monkeypatch.setattr(devices, "available_devices",
                        lambda: {**real(), "pennylane": sorted({*real()["pennylane"], "lightning.gpu"})})
    monkeypatch.setattr(devices, "local_gpus", lambda: 0)
    script = write_script("g.py", "print(1)\n")
    _refused(home, DeviceError, f"device {device} needs CUDA, which this machine does not have", device=device,
             source_module=script, instance_config=InstanceConfig(instanceType="ml.p3.2xlarge"))


def test_qaoa_that_does_not_fit_in_memory(home):
    _refused(home, MemoryLimitError, "QAOA on 34 qubits needs", device=CPU, source_module=WORKLOADS / "qaoa.py",
             hyperparameters={"n_nodes": 34, "n_edges": 40})


def test_qml_that_does_not_fit_in_memory(home):
    _refused(home, MemoryLimitError, r"30 wires \(complex128\) need 32.00 GiB per sample \(2 states", device=CPU,
             source_module=WORKLOADS / "qml.py",
             hyperparameters={"nwires": 30, "batch_size": 64})


def test_pennylane_device_without_the_diff_method(home):
    _refused(home, DeviceError, "does not support diff_method='backprop'", device="local:pennylane/lightning.qubit",
             source_module=WORKLOADS / "qaoa.py", hyperparameters={"n_nodes": 4, "n_edges": 3,
                                                                  "diff_method": "backprop"})
    _refused(home, DeviceError, "does not support diff_method='adjoint'", device="local:pennylane/default.mixed",
             source_module=WORKLOADS / "qaoa.py", hyperparameters={"n_nodes": 4, "n_edges": 3})


def test_unreadable_graph_file(home, tmp_path):
    graph = tmp_path / "graph.txt"
    graph.write_text("this is not a graph\n")
    _refused(home, SpecError, "cannot read graph", device=CPU, source_module=WORKLOADS / "qaoa.py",
             input_data={"input-graph": graph})


def test_bad_workload_hyperparameter(home):
    _refused(home, SpecError, "hyperparameter n_nodes='many'", device=CPU, source_module=WORKLOADS / "qaoa.py",
             hyperparameters={"n_nodes": "many"})
