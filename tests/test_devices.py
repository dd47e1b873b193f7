"""Device strings local:<provider>/<name>."""
from __future__ import annotations

import pytest

from qhybrid.devices import DeviceSpec, available_devices, needs_gpu, parse_device, pennylane_device
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
