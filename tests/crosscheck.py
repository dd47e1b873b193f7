"""Shared pieces of the plugin cross-check tests: devices, dtypes, tolerances, runners.

``tests/`` is on ``sys.path`` through its conftest, so test modules import
this as ``from crosscheck import ...``.
"""
from __future__ import annotations

import numpy as np
import pennylane as qml
import pytest

from qhybrid.sim import reference

DEVICES = [
    pytest.param("qhybrid.cpu", id="cpu"),  # circuits this small run on numpy (plugin/paths.py)
    pytest.param("qhybrid.cpu+engine", id="cpu-engine"),  # the same device on the engine (small_wires=0)
    pytest.param("qhybrid.gpu", id="cuda", marks=pytest.mark.cuda),
]
DTYPES = [
    pytest.param(np.complex128, id="c128"),
    pytest.param(np.complex64, id="c64"),
]
TOL = {np.complex128: 1e-10, np.complex64: 1e-5}


def tol(c_dtype) -> dict:
    """``assert_allclose`` keywords for a dtype: 1e-10 for complex128, 1e-5 for complex64."""
    t = TOL[np.dtype(c_dtype).type]
    return {"atol": t, "rtol": t}


def qhybrid_device(name: str, n_wires, c_dtype=np.complex128, **options):
    """``qml.device(name, wires=n_wires, c_dtype=..., **options)``; ``"qhybrid.cpu+engine"``:
    qhybrid.cpu with ``small_wires=0`` (every circuit on the engine)."""
    if name.endswith("+engine"):
        name, options = name.removesuffix("+engine"), {**options, "small_wires": 0}
    return qml.device(name, wires=n_wires, c_dtype=c_dtype, **options)


def execute(dev, ops, measurements):
    """Results of one tape of ``ops`` and ``measurements`` on ``dev`` (through preprocess)."""
    tape = qml.tape.QuantumScript(ops, measurements)
    return qml.execute([tape], dev)[0]


def default_qubit(ops, measurements, n_wires):
    """The same tape on ``default.qubit``."""
    return execute(qml.device("default.qubit", wires=n_wires), ops, measurements)


def oracle(ops, measurements, n_wires):
    """The same tape on the reference simulator (``qhybrid.sim.reference``)."""
    wires = range(n_wires) if isinstance(n_wires, int) else n_wires
    return reference.simulate(qml.tape.QuantumScript(ops, measurements), wire_order=wires)


def as_list(result, n_measurements: int) -> list:
    """A tape's result as a list with one entry per measurement."""
    return [result] if n_measurements == 1 else list(result)


def assert_all_close(got, want, *, what="", **tolerance):
    """Compare results measurement by measurement, with shapes, naming what differs."""
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, f"{what} measurement {i}: shape {g.shape} != {w.shape}"
        np.testing.assert_allclose(g, w, err_msg=f"{what} measurement {i}", **tolerance)


def compare(device, c_dtype, ops, mps, n_wires, what=""):
    """Run ``ops`` + ``mps`` on a qhybrid device; check it against default.qubit and against
    our reference simulator; return what the device gave."""
    dev = qhybrid_device(device, n_wires, c_dtype)
    got = as_list(execute(dev, ops, mps), len(mps))
    assert_all_close(got, as_list(default_qubit(ops, mps, n_wires), len(mps)),
                     what=f"{what} vs default.qubit", **tol(c_dtype))
    assert_all_close(got, as_list(oracle(ops, mps, n_wires), len(mps)),
                     what=f"{what} vs reference", **tol(c_dtype))
    return got
