"""Every kernel set (the ``kernel_set`` fixture) against the torch reference path, for every step
type and both dtypes; the numba set's planar layer passes and fused ladders."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from kernelsets import device_for
from simhelpers import TOL, assert_close

from qhybrid.sim.apply import apply, generator_overlap, layer_passes
from qhybrid.sim.bind import step_for
from qhybrid.sim.steps import Layer, PhaseLookup
from qhybrid.sim.circuit import Operation
from qhybrid.sim.gates import gate_generator

DTYPES = [torch.complex128, torch.complex64]


def _state(n, b, rng, dtype):
    s = torch.tensor(rng.normal(size=(b, 2**n)) + 1j * rng.normal(size=(b, 2**n)))
    return (s / s.norm(dim=1, keepdim=True)).to(dtype)


OPS = [Operation("RX", (2,), (0.4,)), Operation("Hadamard", (0,)), Operation("CRY", (3, 1), (1.1,)),
       Operation("CNOT", (4, 0)), Operation("SWAP", (1, 3)), Operation("IsingZZ", (0, 4), (0.7,)),
       Operation("MultiRZ", (0, 2, 3), (0.3,)), Operation("Toffoli", (1, 4, 2)),
       Operation("RY", (1,), (np.array([0.1, 0.2]),)), Operation("GlobalPhase", (), (0.3,)),
       Operation("DoubleExcitation", (0, 1, 3, 4), (0.5,)), Operation("RZ", (3,), (0.2,), adjoint=True)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPS, ids=lambda o: o.name)
def test_kernel_sets_match_reference(op, dtype, kernel_set, rng):
    n = 5
    dev = device_for(kernel_set)
    psi = _state(n, 2, rng, dtype)
    step = step_for(op, n, dtype=dtype, device=dev)
    got = apply(psi.clone().to(dev), step, n, kernels=kernel_set)
    ref = apply(psi.clone(), step_for(op, n, dtype=dtype, device="cpu"), n, kernels="torch")
    assert_close(got.cpu(), ref, TOL[dtype])
    back = apply(got.clone(), step.inverse(), n, kernels=kernel_set)
    assert_close(back.cpu(), psi, TOL[dtype])


def _layer(ops, n):
    """A Layer of the 1-qubit ``ops`` in order (wires may repeat: the kernels run them in order)."""
    steps = [step_for(o, n, dtype=torch.complex128, device="cpu") for o in ops]
    P = max(s.matrix.shape[0] for s in steps)
    return steps, Layer(tuple(o.wires[0] for o in ops), torch.stack([s.matrix.expand(P, 2, 2) for s in steps]))


@pytest.mark.parametrize("n", [3, 15])
def test_layer_kernel_matches_one_by_one(n, rng):
    """Blocked 1-qubit layers (small strides in cache blocks, large ones one by one)."""
    ops = [Operation("RX", (w,), (0.1 * w + 0.2,)) for w in range(n)] + [Operation("RY", (0,), (0.3,))]
    steps, layer = _layer(ops, n)
    psi = _state(n, 1, rng, torch.complex128)
    ref = psi.clone()
    for k in steps:
        apply(ref, k, n, kernels="torch")
    assert_close(apply(psi.clone(), layer, n, kernels="numba"), ref, 1e-10)
    assert_close(apply(psi.clone(), layer, n, kernels="torch"), ref, 1e-10)


@pytest.mark.parametrize("n", [2, 5, 7, 9, 13, 16, 21, pytest.param(26, marks=pytest.mark.slow)])  # 26: ~50 s cold
def test_layer_passes_cover_each_amplitude_once_with_pairs_apart(n, rng):
    """The planar passes' geometry: every gate in one pass, each pass's chunks cover every
    amplitude once, a gate's plane distance is its wire's bit, and (above 6 wires) at least 8."""
    wires = sorted(rng.choice(n, size=int(rng.integers(1, n + 1)), replace=False).tolist())
    wires += wires[:2]  # two wires with a second gate
    strides = np.array([1 << (n - 1 - w) for w in wires], dtype=np.int64)
    passes = layer_passes(n, strides)
    assert sorted(i for p in passes for i in p[0]) == list(range(len(wires)))
    for sel, local, starts, offs, W, colmajor in passes:
        addr = (starts[:, None, None] + offs[None, :, None] + np.arange(W)[None, None, :])  # (c, h, j)
        assert np.array_equal(np.sort(addr.ravel()), np.arange(2**n))
        plane = addr.transpose(0, 2, 1).reshape(len(starts), -1) if colmajor else addr.reshape(len(starts), -1)
        for i, d in zip(sel, local):
            s = int(strides[i])
            lo = (plane & s) == 0  # plane positions whose partner is d further
            assert np.array_equal(plane[:, lo.all(0)] | s, plane[:, np.flatnonzero(lo.all(0)) + d])
            if n > 6:
                assert d >= 8


def test_layer_passes_split_into_several_row_passes(rng, monkeypatch):
    """With few row bits per chunk (as at 24+ wires) the high wires take several passes: layers
    (repeated wires, broadcast) and the adjoint sweep through ladders still match the reference."""
    import qhybrid.sim.kernels.planar_layout as apply_mod
    from qhybrid.sim import Measurement, Observable, adjoint_jacobian
    from qhybrid.sim.cache import Cache
    from simhelpers import make_circuit

    monkeypatch.setattr(apply_mod, "ROW_BITS", 3)
    apply_mod._passes.cache_clear()
    try:
        n = 12
        assert len(layer_passes(n, [1 << b for b in range(n)])) == 4
        ops = [Operation(g, (w,), (rng.uniform(-3, 3, size=2),), (0,)) for w in range(n) for g in ("RY", "RZ")]
        ops += [Operation("CNOT", (w, (w + 1) % n)) for w in range(n)]
        ops += [Operation("RX", (w,), (float(rng.uniform(-3, 3)),), (0,)) for w in range(0, n, 2)]
        ops += [Operation("CNOT", (w, (w + 5) % n)) for w in range(n)]
        c = make_circuit(n, ops, [Measurement("expval", Observable.pauli({((0, "X"), (7, "Y"), (11, "Z")): 0.5,
                                                                          ((4, "X"),): -0.3}))])
        ref = adjoint_jacobian(c, kernels="torch", fuse=False)
        got = adjoint_jacobian(c, cache=Cache())
        np.testing.assert_allclose(got.numpy(), ref.numpy(), atol=1e-10)
        ry_rx = ops[0:2 * n:2] + [o for o in ops if o.name == "RX"]  # RY on every wire, then RX on every other one
        _, layer = _layer(ry_rx, n)
        psi = _state(n, 2, rng, torch.complex128)
        assert_close(apply(psi.clone(), layer, n, kernels="numba"), apply(psi.clone(), layer, n, kernels="torch"), 1e-10)
    finally:
        apply_mod._passes.cache_clear()


@pytest.mark.parametrize("name,wires", [("RX", (1,)), ("IsingZZ", (0, 2)), ("CRX", (2, 0)), ("MultiRZ", (0, 1, 2))])
def test_generator_overlap_vs_reference(name, wires, kernel_set, rng):
    n = 4
    bra, ket = _state(n, 2, rng, torch.complex128), _state(n, 2, rng, torch.complex128)
    g = gate_generator(name, len(wires))
    dev = device_for(kernel_set)
    a = generator_overlap(bra.to(dev), ket.to(dev), g, wires, n, kernels=kernel_set)
    b = generator_overlap(bra, ket, g, wires, n, kernels="torch")
    assert_close(a, b, 1e-12)


def test_lookup_step_vs_reference(kernel_set, rng):
    n = 6
    table = torch.exp(1j * torch.linspace(0, 1, 5, dtype=torch.float64)).reshape(1, -1)
    index = torch.tensor(rng.integers(0, 5, size=2**n), dtype=torch.int32)
    step = PhaseLookup(tuple(range(n)), table, index)
    psi = _state(n, 1, rng, torch.complex128)
    dev = device_for(kernel_set)
    on = PhaseLookup(step.wires, table.to(dev), index.to(dev))
    got = apply(psi.clone().to(dev), on, n, kernels=kernel_set)
    assert_close(got.cpu(), apply(psi.clone(), step, n, kernels="torch"), 1e-12)
    assert_close(apply(got, on.inverse(), n, kernels=kernel_set).cpu(), psi, 1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_row_passes_copy_side_by_side_rows_as_one_run(dtype, rng):
    """A row-major pass whose rows start at bit 3 copies them as one run of the float view
    (``W`` > 8): the layer, read through the ladder before it and written through the one after,
    matches the reference in both precisions."""
    from qhybrid.sim.apply import apply_layer
    from qhybrid.sim.fuse import lower

    n = 13
    rows = [p for p in layer_passes(n, [1 << b for b in range(n)]) if not p[5]]
    assert rows and all(p[4] > 8 for p in rows)
    ring = [Operation("CNOT", (w, (w + 1) % n)) for w in range(n)]
    ops = [Operation("RY", (w,), (float(rng.uniform(-3, 3)),)) for w in range(n)]
    ops += [Operation("RX", (w,), (float(rng.uniform(-3, 3)),)) for w in range(0, n, 3)]
    before, layer, after = (lower(o, n, dtype=dtype, device="cpu")[0] for o in (ring, ops, ring[::-1]))
    assert (before.kind, layer.kind, after.kind) == ("perm", "layer", "perm")
    psi = _state(n, 1, rng, dtype)
    ref = psi.clone()
    for o in ring + ops + ring[::-1]:
        apply(ref, step_for(o, n, dtype=dtype, device="cpu"), n, kernels="torch")
    src, dst = psi.clone(), torch.empty_like(psi)
    got = apply_layer(dst, layer, n, perm=before, src=src, after=after)
    assert_close(got, ref, TOL[dtype])
    alone = apply_layer(psi.clone(), layer, n, spare=torch.empty_like(psi))
    ref_alone = psi.clone()
    for o in ops:
        apply(ref_alone, step_for(o, n, dtype=dtype, device="cpu"), n, kernels="torch")
    assert_close(alone, ref_alone, TOL[dtype])
