"""The Triton index-map kernels (``sim/triton/index_ops``) through the ``"triton"`` set, against the
torch reference set: CNOT / SWAP, ladders (in place, gathered, read and written around a layer),
Pauli words with bit flips (expectations, sums applied into ``out``). Tiny tiles (16 amplitudes a
program) so every launch has several programs; every buffer a kernel writes sits in guard bands."""
from __future__ import annotations

import numpy as np
import pytest
import torch

TOL = {torch.complex128: 1e-10, torch.complex64: 1e-5}
DTYPES = [pytest.param(torch.complex128, id="c128"), pytest.param(torch.complex64, id="c64")]


@pytest.fixture(scope="module")
def sets(triton_ops):
    from qhybrid.sim.kernels import get_kernel_set
    from qhybrid.sim.kernels.triton_set import SWAPS_IN_PLACE

    tri = get_kernel_set("triton")
    small = type(tri)(tiles=triton_ops.Tiles(pass_bits=3, tile=16, block=16, dense_rows=4))
    return small, get_kernel_set("torch"), SWAPS_IN_PLACE


def _state(rng, b, n, dtype):
    s = rng.normal(size=(b, 2**n)) + 1j * rng.normal(size=(b, 2**n))
    return torch.tensor(s / np.linalg.norm(s, axis=1, keepdims=True)).to(dtype)


def _same(a, b, dtype):
    diff = float((a.to(torch.complex128) - b.to(torch.complex128)).abs().max())
    assert diff <= TOL[dtype], diff


def _ladder(swaps, n, dtype):
    from qhybrid.sim.bind import ladder_tables, permutation_step

    return permutation_step(swaps, ladder_tables(swaps, n), dtype=dtype, device="cpu")


@pytest.mark.parametrize("dtype", DTYPES)
def test_swaps_match_torch_set(sets, guarded, dtype, rng):
    """CNOTs with the control above and below the target, SWAPs, the extreme bits; 2 programs a row."""
    tri, ref, _ = sets
    n = 7
    psi = _state(rng, 2, n, dtype)
    got, want = guarded(psi), psi.clone()
    for wires, ctrl in (((3, 0), True), ((0, 6), True), ((6, 5), True), ((1, 4), False), ((6, 0), False)):
        tri.apply_swap(got.t, wires, ctrl, n)
        ref.apply_swap(want, wires, ctrl, n)
        _same(got.t, want, dtype)
        got.check()


@pytest.mark.parametrize("dtype", DTYPES)
def test_ladders_match_torch_set(sets, guarded, dtype, rng):
    """A short ladder (in place, gate by gate) and a long one (gathered, copied back), their inverses,
    the gather into another buffer; 8 programs a row."""
    tri, ref, in_place = sets
    n = 7
    short = (((3, 1), True), ((0, 6), False), ((6, 2), True))
    ring = tuple(((w, (w + 1) % n), True) for w in range(n)) + (((1, 5), False),)
    assert len(short) <= in_place < len(ring)
    psi = _state(rng, 2, n, dtype)
    got, want = guarded(psi), psi.clone()
    for swaps in (short, ring):
        step = _ladder(swaps, n, dtype)
        for s in (step, step.inverse(), step):
            tri.apply_permutation(got.t, s, n)
            ref.apply_permutation(want, s, n)
            _same(got.t, want, dtype)
            got.check()
    out = guarded(torch.zeros_like(psi))
    tri.permute_into(out.t, psi, step)
    moved = psi.clone()
    ref.apply_permutation(moved, step, n)
    _same(out.t, moved, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_layer_through_ladders_matches_torch_set(sets, guarded, dtype, rng):
    """``fused_ladders``: a layer read through the ladder before it (from ``src``) and written
    through the one after (into ``src`` or ``spare``), as the engine's forward pass calls it."""
    from qhybrid.sim.steps import Layer

    tri, ref, _ = sets
    n, b = 6, 2
    assert tri.fused_ladders
    before = _ladder(tuple(((w, w + 1), True) for w in range(n - 1)), n, dtype)
    after = _ladder((((5, 0), True), ((2, 3), False), ((1, 4), True), ((0, 2), True), ((3, 5), True)), n, dtype)
    q, _ = np.linalg.qr(rng.normal(size=(3, 2, 2)) + 1j * rng.normal(size=(3, 2, 2)))
    layer = Layer((1, 4, 5), torch.tensor(q[:, None]).to(dtype))
    psi = _state(rng, b, n, dtype)
    want = psi.clone()
    ref.apply_permutation(want, before, n)
    ref.apply_layer(want, layer, n)
    ref.apply_permutation(want, after, n)
    src, dst = guarded(psi), guarded(torch.zeros_like(psi))
    res = tri.apply_layer(dst.t, layer, n, perm=before, src=src.t, after=after)
    assert res is src.t
    _same(res, want, dtype)
    mine, spare = guarded(psi), guarded(torch.zeros_like(psi))
    res = tri.apply_layer(mine.t, layer, n, after=after, spare=spare.t)
    want = psi.clone()
    ref.apply_layer(want, layer, n)
    ref.apply_permutation(want, after, n)
    assert res is spare.t
    _same(res, want, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pauli_words_match_torch_set(sets, guarded, dtype, rng):
    """Expectations with bit flips (the top bit, every bit, Y-like words) and a sum of words with
    complex coefficients into a nonzero ``out``; 4 programs a row."""
    tri, ref, _ = sets
    n = 6
    psi = _state(rng, 3, n, dtype)
    for x, z in ((0b100000, 0), (0b000001, 0b000001), (0b111111, 0b101010), (0b010100, 0b110011)):
        got = tri.pauli_expval(psi, x, z)
        assert got.dtype == torch.complex128 and got.device.type == "cpu"
        _same(got, ref.pauli_expval(psi, x, z), dtype)
    terms = [(0.3 - 0.7j, 0b100010, 0b000110), (1.25, 0b000001, 0), (-0.5j, 0, 0b111000), (0.8, 0b111111, 0b10101)]
    start = _state(rng, 3, n, dtype)
    out, want = guarded(start), start.clone()
    tri.pauli_sum_into(out.t, psi, terms)
    ref.pauli_sum_into(want, psi, terms)
    _same(out.t, want, dtype)
    tri.pauli_sum_into(out.t, psi, [])
    _same(out.t, want, dtype)


def test_engine_forward_through_ladders(sets, rng, monkeypatch):
    """``sim.simulate`` with a cache (the spare buffer: ladders gathered into it, layers read and
    written through them) on the triton set vs the torch set: a layered circuit with CNOT rings."""
    from qhybrid.sim import Cache, Circuit, Operation
    from qhybrid.sim.simulate import final_state

    tri, ref, _ = sets
    n = 6
    ops = []
    for layer in range(2):
        ops += [Operation("RY", (w,), (float(rng.uniform(-3, 3)),)) for w in range(n)]
        ops += [Operation("CNOT", (w, (w + 1 + layer) % n)) for w in range(n)]
    ops += [Operation("RX", (w,), (float(rng.uniform(-3, 3)),)) for w in range(0, n, 2)]
    ops += [Operation("SWAP", (w, n - 1 - w)) for w in range(n // 2)] + [Operation("CNOT", (0, 3))]
    circuit = Circuit(n, tuple(ops))
    gathers = []
    original = tri.permute_into
    monkeypatch.setattr(tri, "permute_into", lambda *a: gathers.append(1) or original(*a))
    got = final_state(circuit, cache=Cache(), kernels=tri)
    assert len(gathers) >= 2  # the ladders went through the gather, not the torch reference
    want = final_state(circuit, kernels=ref)
    _same(got, want, torch.complex128)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_reads_every_digit(sets, guarded, dtype, rng, triton_ops):
    """12 wires: the gather's index is two ten-bit digits (a ladder from wire 0 to wire 11 and
    back), 4 programs of 1024 amplitudes a row."""
    _, ref, _ = sets
    from qhybrid.sim.kernels import get_kernel_set

    tri = type(get_kernel_set("triton"))(tiles=triton_ops.Tiles(pass_bits=3, tile=16, block=1024, dense_rows=4))
    n = 12
    swaps = (((0, 11), True), ((11, 1), True), ((2, 10), False), ((9, 0), True), ((5, 11), False))
    step = _ladder(swaps, n, dtype)
    psi = _state(rng, 1, n, dtype)
    out = guarded(torch.zeros_like(psi))
    tri.permute_into(out.t, psi, step.inverse())
    want = psi.clone()
    ref.apply_permutation(want, step.inverse(), n)
    _same(out.t, want, dtype)
