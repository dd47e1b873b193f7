"""``sim/triton/status``: Triton's documented minimum and its interpreter switch (which kernel set a
GPU runs is decided in ``devices.gpu_kernel_path``: tests/test_devices.py)."""
from __future__ import annotations

import pytest

from qhybrid.sim.triton import MIN_CAPABILITY, status


def test_minimum_is_the_documented_one():
    assert MIN_CAPABILITY == (8, 0)


@pytest.mark.parametrize("value,on", [("1", True), ("true", True), (" ON ", True), ("0", False), ("", False)])
def test_interpreter_switch(monkeypatch, value, on):
    monkeypatch.setenv("TRITON_INTERPRET", value)
    assert status.interpreting() is on
