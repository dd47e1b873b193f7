"""Device strings local:<provider>/<name>."""
from __future__ import annotations

import pytest

from qhybrid.devices import DeviceSpec, Target, available_devices, needs_gpu, parse_device, pennylane_device, resolve
from qhybrid.errors import DeviceError


def test_parse_valid_strings():
    assert parse_device("local:qhybrid/qhybrid.cpu") == DeviceSpec("qhybrid", "qhybrid.cpu")
    assert str(parse_device("local:pennylane/default.qubit")) == "local:pennylane/default.qubit"


def test_available_devices_lists_installed_pennylane_devices():
    avail = available_devices()
    assert avail["qhybrid"] == ["qhybrid.cpu", "qhybrid.gpu"]
    assert {"default.qubit", "lightning.qubit"} <= set(avail["pennylane"])


@pytest.mark.parametrize("bad, match", [
    ("qhybrid.cpu", "not of the form"),
    ("local:nope/x", "unknown device provider 'nope'"),
    ("local:qhybrid/qhybrid.tpu", "unknown qhybrid simulator 'qhybrid.tpu'.*qhybrid.cpu"),
    ("local:pennylane/defaultqubit", "did you mean 'default.qubit'"),
])
def test_bad_strings_name_the_value_and_the_valid_ones(bad, match):
    with pytest.raises(DeviceError, match=match):
        parse_device(bad)


def test_needs_gpu():
    assert needs_gpu("local:qhybrid/qhybrid.gpu")
    assert not needs_gpu("local:pennylane/lightning.qubit")
    assert needs_gpu(DeviceSpec("pennylane", "lightning.gpu"))


def test_pennylane_device():
    dev = pennylane_device("local:pennylane/default.qubit", wires=2)
    assert dev.name == "default.qubit"


def test_resolve_says_how_a_device_runs():
    cpu = resolve("local:qhybrid/qhybrid.cpu")
    assert (cpu.provider, cpu.name, cpu.torch_device, cpu.needs_gpu, cpu.kernels) == \
        ("qhybrid", "qhybrid.cpu", "cpu", False, "numba")
    gpu = resolve(DeviceSpec("qhybrid", "qhybrid.gpu"))
    assert (gpu.torch_device, gpu.needs_gpu) == ("cuda", True) and gpu.kernels in ("triton", "torch")
    peer = resolve("local:pennylane/lightning.qubit")
    assert (peer.kernels, peer.needs_gpu, str(peer)) == ("pennylane", False, "local:pennylane/lightning.qubit")
    assert resolve(peer) is peer and isinstance(peer, Target) and peer.spec == parse_device(str(peer))


def test_resolve_rejects_what_parse_rejects():
    with pytest.raises(DeviceError, match="unknown qhybrid simulator"):
        resolve("local:qhybrid/qhybrid.tpu")


def test_resolve_imports_no_engine_and_kernel_set_loads_it():
    """resolve() plans the kernel set by name without importing numba or torch; kernel_set() loads it."""
    import subprocess
    import sys

    code = ("import sys; from qhybrid.devices import resolve; t = resolve('local:qhybrid/qhybrid.gpu'); "
            "resolve('local:qhybrid/qhybrid.cpu'); print(t.kernels, 'torch' in sys.modules, 'numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[1:] == ["False", "False"]
    cpu = resolve("local:qhybrid/qhybrid.cpu").kernel_set()
    assert cpu.name == "numba" and cpu.runs_on("cpu")
    with pytest.raises(DeviceError, match="PennyLane's own simulator"):
        resolve("local:pennylane/default.qubit").kernel_set()


def test_gpu_kernel_path_says_which_set_and_why(monkeypatch):
    import importlib.util

    import qhybrid.devices as devices

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "triton" else real(name, *a))
    assert devices.gpu_kernel_path() == ("torch", "triton is not installed (it comes with CUDA builds of torch)")
    assert resolve("local:qhybrid/qhybrid.gpu").kernels == "torch"
    monkeypatch.setattr(importlib.util, "find_spec", real)
    if real("triton") is not None:
        name, why = devices.gpu_kernel_path(cuda=False)
        assert name == "torch"
        if devices._triton_installed():
            assert "no CUDA GPU visible" in why and "8.0+" in why
        else:
            assert why == "qhybrid's Triton kernel set is not part of this install"


@pytest.fixture
def fake_gpu(monkeypatch):
    """Triton and its kernel set installed, torch seeing one CUDA GPU; ``fake_gpu(name, capability)``."""
    import importlib.util
    import types

    import torch

    import qhybrid.sim.kernels as ks

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object())
    monkeypatch.setattr(ks, "get_kernel_set", lambda name: types.SimpleNamespace(name=name))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)

    def gpu(name, capability):
        monkeypatch.setattr(torch.cuda, "get_device_name", lambda i=0: name)
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda i=0: capability)

    return gpu


def test_gpu_kernel_path_below_tritons_minimum(fake_gpu):
    """A V100 (compute capability 7.0, ml.p3.*) runs the torch reference: Triton documents 8.0+."""
    import qhybrid.devices as devices

    fake_gpu("Tesla V100-SXM2-16GB", (7, 0))
    name, why = devices.gpu_kernel_path()
    assert name == "torch" and why == ("Tesla V100-SXM2-16GB has compute capability 7.0, below Triton's "
                                       "documented minimum 8.0")
    fake_gpu("NVIDIA H200", (9, 0))
    assert devices.gpu_kernel_path() == ("triton", "NVIDIA H200, compute capability 9.0")


@pytest.mark.parametrize("cap,kernels", [((7, 0), "torch"), ((7, 5), "torch"), ((8, 0), "triton"), ((9, 0), "triton")])
def test_gpu_kernel_path_follows_the_one_minimum(fake_gpu, monkeypatch, cap, kernels):
    """The decision reads sim/triton/status's MIN_CAPABILITY, the one figure."""
    import qhybrid.devices as devices
    from qhybrid.sim.triton.status import MIN_CAPABILITY

    assert devices.TRITON_MIN_CAPABILITY is MIN_CAPABILITY
    fake_gpu("Tesla X", cap)
    name, why = devices.gpu_kernel_path()
    assert name == kernels and f"{cap[0]}.{cap[1]}" in why and "Tesla X" in why
    import qhybrid.sim.triton.status as status

    monkeypatch.setattr(status, "MIN_CAPABILITY", (9, 1))  # the local GPU and the estimate's types alike
    assert devices.gpu_kernel_path()[0] == "torch"
    assert status.capability_path(cap, "Tesla X")[0] == "torch"


def test_gpu_kernel_path_without_cuda(fake_gpu, monkeypatch):
    import torch

    import qhybrid.devices as devices

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    name, why = devices.gpu_kernel_path()
    assert name == "torch" and why == "no CUDA GPU visible; a GPU of compute capability 8.0+ runs triton"


def test_without_cuda_every_gpu_question_says_so_in_one_line(monkeypatch):
    """require_cuda / torch_device / cuda_device_count / torch_gpus: the one answer to "is there a GPU"."""
    import torch

    import qhybrid.devices as devices

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(devices, "torch_build", lambda: "2.13.0+cu128")
    with pytest.raises(DeviceError) as err:
        devices.require_cuda("device local:qhybrid/qhybrid.gpu", "local:qhybrid/qhybrid.cpu")
    assert str(err.value) == ("device local:qhybrid/qhybrid.gpu needs a CUDA GPU, which torch 2.13.0+cu128 does not "
                              "see here; use local:qhybrid/qhybrid.cpu")
    with pytest.raises(DeviceError, match="qhybrid.gpu needs a CUDA GPU"):
        devices.torch_device(resolve("local:qhybrid/qhybrid.gpu"))
    assert devices.torch_device(resolve("local:qhybrid/qhybrid.cpu")) == torch.device("cpu")
    assert devices.cuda_device_count() == 0 and devices.torch_gpus() == []


def test_with_cuda_the_target_lives_on_the_current_device(monkeypatch):
    import torch

    import qhybrid.devices as devices

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 1)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert devices.torch_device(resolve("local:qhybrid/qhybrid.gpu")) == torch.device("cuda", 1)
    assert devices.cuda_device_count() == 2


def test_missing_lightning_gpu_says_what_to_install(monkeypatch):
    import qhybrid.devices as devices

    monkeypatch.setattr(devices, "_pennylane_devices", lambda: ("default.qubit", "lightning.qubit"))
    with pytest.raises(DeviceError) as err:
        parse_device("local:pennylane/lightning.gpu")
    msg = str(err.value)
    assert "\n" not in msg and "pip install pennylane-lightning-gpu" in msg and "CUDA 12" in msg
    assert "compute capability 7.0" in msg and "local:qhybrid/qhybrid.gpu" in msg
