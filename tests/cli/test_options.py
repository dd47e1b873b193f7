"""Shared options: the default device picked from the NVIDIA driver (a fake one here), never by
importing torch; bare device names."""
from __future__ import annotations

import subprocess
import sys

import pytest

from qhybrid.cli import options
from qhybrid import devices


@pytest.fixture
def fake_driver(tmp_path, monkeypatch):
    """A driver folder reporting one GPU, no device files, a CUDA build of torch; all visible."""
    (tmp_path / "nvidia" / "gpus" / "0000:00:1e.0").mkdir(parents=True)
    (tmp_path / "dev").mkdir()
    monkeypatch.setattr(devices, "NVIDIA_DRIVER", tmp_path / "nvidia")
    monkeypatch.setattr(devices, "DEVICE_FILES", tmp_path / "dev")
    monkeypatch.setattr(devices, "torch_build", lambda: "2.13.0+cu128")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    return tmp_path


def test_default_device_is_the_gpu_when_the_driver_reports_one(fake_driver):
    assert devices.local_gpus() == 1 and options.cuda_present()
    assert options.device_string(None) == "local:qhybrid/qhybrid.gpu"
    assert options.instance_for(options.device_string(None), None) == options.GPU_INSTANCE


@pytest.mark.parametrize("change", ["no gpus", "hidden", "cpu wheel", "no torch", "device files"])
def test_default_device_is_the_cpu_otherwise(fake_driver, monkeypatch, change):
    import shutil

    if change == "no gpus":
        shutil.rmtree(fake_driver / "nvidia" / "gpus")
    elif change == "hidden":
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "-1")
    elif change == "cpu wheel":
        monkeypatch.setattr(devices, "torch_build", lambda: "2.13.0+cpu")
    elif change == "no torch":
        monkeypatch.setattr(devices, "torch_build", lambda: None)
    else:  # no driver folder, but device files (a container): still a GPU
        shutil.rmtree(fake_driver / "nvidia")
        (fake_driver / "dev" / "nvidia0").touch()
        (fake_driver / "dev" / "nvidiactl").touch()
        assert options.device_string(None) == "local:qhybrid/qhybrid.gpu"
        return
    assert not options.cuda_present()
    assert options.device_string(None) == "local:qhybrid/qhybrid.cpu"


def test_picking_the_default_never_imports_torch(tmp_path):
    """With a fake driver and a CUDA build of torch the default is the GPU, and torch stays unloaded
    (the job asks torch; the CLI would pay a second or more for it)."""
    (tmp_path / "gpus" / "0000:00:1e.0").mkdir(parents=True)
    code = (
        "import sys, pathlib\n"
        "from qhybrid import devices\n"
        f"devices.NVIDIA_DRIVER = pathlib.Path({str(tmp_path)!r})\n"
        "devices.torch_build = lambda: '2.13.0+cu128'\n"
        "from qhybrid.cli import options\n"
        "from qhybrid.submit import preflight\n"
        "print(options.device_string(None), preflight.cuda_expected(), 'torch' in sys.modules)\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["local:qhybrid/qhybrid.gpu", "True", "False"]


def test_bare_names_and_an_explicit_device():
    assert options.device_string("qhybrid.gpu") == "local:qhybrid/qhybrid.gpu"
    assert options.device_string(" lightning.qubit ") == "local:pennylane/lightning.qubit"
