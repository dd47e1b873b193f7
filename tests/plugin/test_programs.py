"""Our real-style PennyLane programs (``benchmarks/programs/``) print the same numbers on
qhybrid.cpu as on lightning.qubit, each in fresh processes (exact quantities to 1e-8, sampled
ones within shot noise). Two fast ones here; the whole suite is slow."""
import importlib.util
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "programs.py"
_spec = importlib.util.spec_from_file_location("programs_bench", _PATH)
programs = importlib.util.module_from_spec(_spec)
sys.modules["programs_bench"] = programs
_spec.loader.exec_module(programs)

FAST = ("broadcasting", "counts")


def _compare(name):
    peer, _ = programs.run_program(name, "lightning.qubit")
    ours, _ = programs.run_program(name, "qhybrid.cpu")
    assert peer, f"{name} printed nothing on lightning.qubit"
    assert programs.differences(peer, ours) == []


@pytest.mark.parametrize("name", FAST)
def test_fast_programs_agree_with_lightning(name):
    _compare(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in programs.program_names() if n not in FAST])
def test_every_program_agrees_with_lightning(name):
    _compare(name)


def test_differences_catch_what_differs():
    exact = {"e": ("exact", [1.0, 2.0])}
    assert programs.differences(exact, {"e": ("exact", [1.0, 2.0 + 1e-9])}) == []
    assert programs.differences(exact, {"e": ("exact", [1.0, 2.0 + 1e-6])})
    assert programs.differences(exact, {})
    noisy = {"p": ("sampled", [0.50, 0.01])}
    assert programs.differences(noisy, {"p": ("sampled", [0.52, 0.01])}) == []
    assert programs.differences(noisy, {"p": ("sampled", [0.60, 0.01])})
    assert programs.differences({"t": ("text", "a")}, {"t": ("text", "b")})
