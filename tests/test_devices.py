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
    assert (gpu.torch_device, gpu.needs_gpu, gpu.kernels) == ("cuda", True, "torch")
    peer = resolve("local:pennylane/lightning.qubit")
    assert (peer.kernels, peer.needs_gpu, str(peer)) == ("pennylane", False, "local:pennylane/lightning.qubit")
    assert resolve(peer) is peer and isinstance(peer, Target) and peer.spec == parse_device(str(peer))


def test_resolve_rejects_what_parse_rejects():
    with pytest.raises(DeviceError, match="unknown qhybrid simulator"):
        resolve("local:qhybrid/qhybrid.tpu")
