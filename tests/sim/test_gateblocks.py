"""The cache blocks of sim/gateblocks.py: how a gate list is cut, and (with the numba kernels of
sim/batched.py) that running it block by block, chunk by chunk, is running it gate by gate."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from batchedhelpers import random_states, random_unitaries

from qhybrid.qml.circuit import chain_pairs
from qhybrid.sim import batchedtorch, gateblocks
from qhybrid.sim.jit import HAVE_NUMBA

TOL = {torch.complex128: 1e-12, torch.complex64: 1e-5}


def dressed_gates(n):
    """The DressedQNN's gate list after the product state (qml.layer): chain r=1, Rot layer, chain r=3."""
    return list(chain_pairs(n, 1)) + [(-1, w) for w in range(n)] + list(chain_pairs(n, 3))


def _wire_orders(gates, order):
    """Per wire, the gates (list positions) that touch it, in the order ``order`` runs them."""
    out = {}
    for g in order:
        for w in gates[g]:
            if w >= 0:
                out.setdefault(w, []).append(g)
    return out


@pytest.mark.parametrize("reorder", [True, False])
def test_blocks_cover_the_list_with_their_targets_inside_and_each_wire_in_order(reorder):
    n, gates = 12, dressed_gates(12)
    blks = gateblocks.blocks(n, gates, max_bits=6, reorder=reorder)
    order = [int(g) for b in blks for g in b.index]
    assert sorted(order) == list(range(len(gates)))
    # only gates on disjoint wires trade places: every wire sees its gates in the list's order
    assert _wire_orders(gates, order) == _wire_orders(gates, range(len(gates)))
    assert (order == list(range(len(gates)))) != reorder  # the schedule moved gates (and cut fewer)
    for b in blks:
        bits = [p for p in range(n) if not np.any(b.starts & (1 << p))]  # the chunk's own bits
        assert len(bits) == 6 and {0, 1, 2} <= set(bits)
        assert len(b.starts) * len(b.offs) * b.W == 2**n
        for g, e in zip(b.index, b.ext):
            control, target = gates[g]
            assert n - 1 - target in bits
            assert e == (1 << (n - 1 - control) if control >= 0 and n - 1 - control not in bits else 0)


def test_a_small_register_is_one_direct_block_and_large_ones_few():
    (one,) = gateblocks.blocks(8, dressed_gates(8))
    assert one.direct and one.index.tolist() == list(range(24)) and one.starts.tolist() == [0]
    assert gateblocks.blocks(8, []) == ()
    # the DressedQNN's 3n gates: cut in circuit order, 4 blocks at 24 wires and 7 at 26 (so 4 or 7
    # passes forward and back); scheduled, 3 and 5 (26: the chain r=1 alone needs 3, and the
    # chain r=3's 23 bits outside the lowest 3 cannot fit the 2 x 11 free bits of two more)
    counts = {n: (len(gateblocks.blocks(n, dressed_gates(n), reorder=False)),
                  len(gateblocks.blocks(n, dressed_gates(n)))) for n in (20, 22, 24, 26)}
    assert counts == {20: (4, 3), 22: (5, 4), 24: (4, 3), 26: (7, 5)}


def test_the_schedule_keeps_the_list_when_it_cuts_no_fewer():
    gates = [(-1, w) for w in range(20)]  # one gate a wire: nothing to gain
    assert gateblocks.schedule(20, gates, max_bits=12) == tuple(range(20))
    assert gateblocks.schedule(8, dressed_gates(8)) == tuple(range(24))  # one block


pytestmark_numba = pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")


def _run_both(n, gates, max_bits, dtype, batch=2):
    """Forward states, sweep matrices and swept states: as one block (gate by gate on the whole
    state), cut in the list's order, and cut as scheduled."""
    from qhybrid.sim import batched

    state, mats = random_states(batch, n, dtype, 5), random_unitaries(len(gates), dtype, 6)
    lam = random_states(batch, n, dtype, 7)
    out = []
    for bits, reorder in ((n, False), (max_bits, False), (max_bits, True)):
        psi = batched.to_planes(state.numpy(), np.empty_like(state.numpy()))
        lp = batched.to_planes(lam.numpy(), np.empty_like(lam.numpy()))
        blks = batched.blocks(n, gates, max_bits=bits, reorder=reorder)
        batched.run(psi, mats.numpy(), blks)
        fwd = psi.copy()
        jm = batched.sweep(psi, lp, mats.numpy(), blks)
        out.append((fwd, jm, psi.copy(), lp.copy()))
    return out, (state, lam, mats)


@pytestmark_numba
@pytest.mark.parametrize("dtype", [torch.complex128, torch.complex64])
@pytest.mark.parametrize("n, max_bits", [(9, 4), (10, 6), (12, 7)])
def test_blocked_run_and_sweep_equal_the_unblocked(n, max_bits, dtype):
    (whole, in_order, cut), (state, lam, mats) = _run_both(n, dressed_gates(n), max_bits, dtype)
    assert len(batched_blocks(n, max_bits)) < len(batched_blocks(n, max_bits, reorder=False))
    for a, b, c in zip(whole, in_order, cut):  # the scheduled cut is the circuit's order, to rounding
        tol = TOL[dtype] * (8 if a.dtype == np.complex128 else 1)
        np.testing.assert_allclose(b, a, atol=tol, rtol=0)
        np.testing.assert_allclose(c, a, atol=tol, rtol=0)
    # and both are the torch reference's (forward states, then the sweep's matrices)
    gates, scratch = dressed_gates(n), torch.empty(state.numel(), dtype=dtype)
    want = state.clone()
    batchedtorch.run(want, mats, gates, n, scratch)
    got = torch.complex(torch.from_numpy(cut[0][:, 0]), torch.from_numpy(cut[0][:, 1]))
    torch.testing.assert_close(got, want, atol=10 * TOL[dtype], rtol=0)
    want_jm = batchedtorch.sweep(want, lam.clone(), mats, gates, n, scratch)
    torch.testing.assert_close(torch.from_numpy(cut[1]).to(dtype), want_jm, atol=100 * TOL[dtype], rtol=0)


def batched_blocks(n, max_bits, reorder=True):
    return gateblocks.blocks(n, dressed_gates(n), max_bits=max_bits, reorder=reorder)


@pytestmark_numba
def test_blocked_sweep_with_random_gates_and_threads_sharing_chunks(monkeypatch):
    from qhybrid.sim import batched

    gen = np.random.default_rng(3)
    n = 10
    gates = []
    for _ in range(40):
        t = int(gen.integers(n))
        c = int(gen.integers(-1, n))
        gates.append((c if c != t else -1, t))
    monkeypatch.setattr(batched, "threads_for", lambda size: 3)
    monkeypatch.setattr(batched, "SPLIT_MIN", 0)
    (whole, in_order, cut), _ = _run_both(n, gates, 5, torch.complex128, batch=1)
    for a, b, c in zip(whole, in_order, cut):
        np.testing.assert_allclose(b, a, atol=1e-11, rtol=0)
        np.testing.assert_allclose(c, a, atol=1e-11, rtol=0)


@pytestmark_numba
@pytest.mark.parametrize("dtype", [torch.complex128, torch.complex64])
def test_product_and_observe_match_torch(dtype):
    from qhybrid.sim import batched

    gen = torch.Generator().manual_seed(2)
    n, b = 7, 3
    raw = torch.randn((b, n, 2, 2), generator=gen, dtype=torch.float64)
    factors = torch.complex(raw[..., 0], raw[..., 1])
    factors = (factors / factors.norm(dim=2, keepdim=True)).to(dtype)  # a normalised state
    want = batchedtorch.product_state(factors, torch.empty(b << n, dtype=dtype), torch.empty(b << n, dtype=dtype))
    planes = np.empty((b, 2, 2**n), dtype=np.float64 if dtype == torch.complex128 else np.float32)
    batched.product(planes, factors.numpy())
    got = torch.complex(torch.from_numpy(planes[:, 0]), torch.from_numpy(planes[:, 1]))
    torch.testing.assert_close(got, want, atol=TOL[dtype] * 10, rtol=0)
    obs = random_unitaries(1, dtype, 4)[0]
    obs = obs + obs.conj().T
    lam = np.zeros_like(planes)
    rho = batched.observe(planes, lam, obs.numpy())
    head = want.view(b, 2, -1).to(torch.complex128)
    torch.testing.assert_close(torch.from_numpy(rho), head.conj() @ head.transpose(1, 2), atol=TOL[dtype] * 100, rtol=0)
    want_lam = (obs.to(torch.complex128) @ head).reshape(b, -1)
    got_lam = torch.complex(torch.from_numpy(lam[:, 0]), torch.from_numpy(lam[:, 1])).to(torch.complex128)
    torch.testing.assert_close(got_lam, want_lam, atol=TOL[dtype] * 10, rtol=0)
    np.testing.assert_array_equal(batched.observe(planes, None, obs.numpy()), rho)  # without lambda: rho alone
