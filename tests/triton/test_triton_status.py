"""``triton_status``: which path a GPU device uses, and why (no GPU needed: CUDA is faked)."""
from __future__ import annotations

import importlib.util

import pytest
import torch

from qhybrid.sim.triton import MIN_CAPABILITY, status


def test_minimum_is_the_documented_one():
    assert MIN_CAPABILITY == (8, 0)


def test_missing_triton(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "triton" else real(name, *a))
    ok, why = status.triton_status()
    assert not ok and "not installed" in why and "torch reference" in why


def test_interpreter(monkeypatch):
    pytest.importorskip("triton")
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    ok, why = status.triton_status()
    assert ok and "interpreter" in why


@pytest.mark.parametrize("cap,usable", [((7, 0), False), ((7, 5), False), ((8, 0), True), ((9, 0), True)])
def test_compute_capability(monkeypatch, cap, usable):
    pytest.importorskip("triton")
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda dev=None: cap)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda dev=None: "Tesla X")
    ok, why = status.triton_status()
    assert ok is usable
    assert f"{cap[0]}.{cap[1]}" in why and "Tesla X" in why
    if not usable:
        assert "8.0" in why and "torch reference" in why


def test_no_cuda(monkeypatch):
    pytest.importorskip("triton")
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    ok, why = status.triton_status()
    assert not ok and "no CUDA device" in why
