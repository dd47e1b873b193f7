"""A general circuit's forward calls, counted against what ``sim.simulate.final_state`` does."""
from __future__ import annotations

import importlib

import pytest

from qhybrid.estimate.circuit import circuit_work, forward_calls
from qhybrid.sim.circuit import Circuit, Operation

sim_simulate = importlib.import_module("qhybrid.sim.simulate")  # the module (the package exports the function)


def _layers(n: int, depth: int, ladder: bool = True):
    ops = []
    for d in range(depth):
        ops += [Operation("RY", (w,), (0.1 * (w + d + 1),)) for w in range(n)]
        ops += [Operation("RZ", (w,), (0.2,)) for w in range(n)]
        if ladder:
            ops += [Operation("CNOT", (w, w + 1)) for w in range(n - 1)]
        else:
            ops += [Operation("IsingZZ", (w, (w + 1) % n), (0.3,)) for w in range(n)]
    return tuple(ops)


@pytest.mark.parametrize("with_cache", [False, True])
@pytest.mark.parametrize("ladder", [True, False])
@pytest.mark.parametrize("depth", [1, 3])
def test_forward_calls_match_final_state(monkeypatch, ladder, depth, with_cache):
    from qhybrid.sim.cache import Cache
    from qhybrid.sim.kernels import as_kernel_set

    ks = as_kernel_set(None, "cpu")  # the set final_state runs on the CPU (its fused calls counted on it)
    counted, inside = [], []  # a kernel call made by ``apply`` is that apply's, not one more
    for owner, name in ((sim_simulate, "apply"), (ks, "apply_layer"), (ks, "permute_into")):
        original = getattr(owner, name)

        def wrapper(*args, _f=original, _name=name, **kwargs):
            if not inside:
                counted.append(_name)
            inside.append(_name)
            try:
                return _f(*args, **kwargs)
            finally:
                inside.pop()

        monkeypatch.setattr(owner, name, wrapper)
    circuit = Circuit(6, _layers(6, depth, ladder))
    sim_simulate.final_state(circuit, kernels=ks, cache=Cache() if with_cache else None)
    assert len(counted) == forward_calls(circuit, spare=with_cache) > 0


def test_work_grows_with_depth_and_gradient():
    shallow, deep = Circuit(8, _layers(8, 1)), Circuit(8, _layers(8, 4))
    assert circuit_work(deep).bytes > circuit_work(shallow).bytes
    assert circuit_work(shallow, gradient=False).bytes < circuit_work(shallow).bytes
