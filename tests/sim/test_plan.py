"""The plan's layer matrices (sim/plan.py): built for all layer segments in one batch, equal to
each segment's own, and what the forward pass and the adjoint sweep share."""
from __future__ import annotations

import numpy as np
import pytest
from simhelpers import make_circuit, random_ops

from qhybrid.sim import Operation
from qhybrid.sim.adjoint import adjoint_jacobian
from qhybrid.sim.bind import run_matrices
from qhybrid.sim.fuse import build_plan


def _layered(n, rng, *, batch=None, layers=3):
    ops = []
    for _ in range(layers):
        for w in range(n):
            for g in ("RX", "RY", "RZ"):
                p = rng.uniform(-np.pi, np.pi, size=batch) if batch else float(rng.uniform(-np.pi, np.pi))
                ops.append(Operation(g, (w,), (p,), (0,)))
        ops += [Operation("CNOT", (w, (w + 1) % n)) for w in range(n)]
    return ops


@pytest.mark.parametrize("batch", [None, 3])
def test_layer_matrices_equal_each_segments_own(batch):
    rng = np.random.default_rng(5)
    ops = _layered(4, rng, batch=batch) + random_ops(4, 20, rng, batch=batch)
    plan = build_plan(ops, 4)
    mats = plan.layer_matrices(ops)
    layers = [i for i, s in enumerate(plan.segments) if s.kind == "layer"]
    assert sorted(mats) == layers and len(layers) >= 3
    for i in layers:
        np.testing.assert_array_equal(mats[i], run_matrices(plan.segments[i].runs, ops))


def test_adjoint_with_shared_matrices_matches_separate_binding(monkeypatch):
    """The sweep reads the forward pass's matrices: the Jacobian is the one binding twice gives."""
    from qhybrid.sim import Measurement, Observable, plan as plan_module

    rng = np.random.default_rng(7)
    c = make_circuit(5, _layered(5, rng), (Measurement("expval", Observable.pauli({"Z": 1.0}, wires=(0,))),))
    shared = adjoint_jacobian(c)
    monkeypatch.setattr(plan_module.Plan, "layer_matrices", lambda self, ops: {})
    separate = adjoint_jacobian(c)
    np.testing.assert_allclose(shared.numpy(), separate.numpy(), atol=1e-12, rtol=0)
