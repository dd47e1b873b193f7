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


def test_blocks_cover_the_list_in_order_with_their_targets_inside():
    n, gates = 12, dressed_gates(12)
    blks = gateblocks.blocks(n, gates, max_bits=6)
    assert [b.g0 for b in blks] == [0] + [b.g1 for b in blks[:-1]] and blks[-1].g1 == len(gates)
    for b in blks:
        bits = [p for p in range(n) if not np.any(b.starts & (1 << p))]  # the chunk's own bits
        assert len(bits) == 6 and {0, 1, 2} <= set(bits)
        assert len(b.starts) * len(b.offs) * b.W == 2**n
        for (control, target), e in zip(gates[b.g0:b.g1], b.ext):
            assert n - 1 - target in bits
            assert e == (1 << (n - 1 - control) if control >= 0 and n - 1 - control not in bits else 0)


def test_a_small_register_is_one_direct_block_and_large_ones_few():
    (one,) = gateblocks.blocks(8, dressed_gates(8))
    assert one.direct and (one.g0, one.g1) == (0, 24) and one.starts.tolist() == [0]
    assert gateblocks.blocks(8, []) == ()
    # the DressedQNN's 72 gates at 24 wires: 4 blocks, so 4 passes forward and 4 back (was 48 and 96)
    assert len(gateblocks.blocks(24, dressed_gates(24))) == 4


pytestmark_numba = pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")


def _run_both(n, gates, max_bits, dtype, batch=2):
    from qhybrid.sim import batched

    state, mats = random_states(batch, n, dtype, 5), random_unitaries(len(gates), dtype, 6)
    lam = random_states(batch, n, dtype, 7)
    out = []
    for bits in (n, max_bits):  # one block (gate by gate on the whole state), then cut
        psi = batched.to_planes(state.numpy(), np.empty_like(state.numpy()))
        lp = batched.to_planes(lam.numpy(), np.empty_like(lam.numpy()))
        blks = batched.blocks(n, gates, max_bits=bits)
        batched.run(psi, mats.numpy(), blks)
        fwd = psi.copy()
        jm = batched.sweep(psi, lp, mats.numpy(), blks)
        out.append((fwd, jm, psi.copy(), lp.copy()))
    return out, (state, lam, mats)


@pytestmark_numba
@pytest.mark.parametrize("dtype", [torch.complex128, torch.complex64])
@pytest.mark.parametrize("n, max_bits", [(9, 4), (10, 6), (12, 7)])
def test_blocked_run_and_sweep_equal_the_unblocked(n, max_bits, dtype):
    (whole, cut), (state, lam, mats) = _run_both(n, dressed_gates(n), max_bits, dtype)
    for a, b in zip(whole, cut):
        np.testing.assert_allclose(b, a, atol=TOL[dtype] * (8 if a.dtype == np.complex128 else 1), rtol=0)
    # and both are the torch reference's (forward states, then the sweep's matrices)
    gates, scratch = dressed_gates(n), torch.empty(state.numel(), dtype=dtype)
    want = state.clone()
    batchedtorch.run(want, mats, gates, n, scratch)
    got = torch.complex(torch.from_numpy(cut[0][:, 0]), torch.from_numpy(cut[0][:, 1]))
    torch.testing.assert_close(got, want, atol=10 * TOL[dtype], rtol=0)
    want_jm = batchedtorch.sweep(want, lam.clone(), mats, gates, n, scratch)
    torch.testing.assert_close(torch.from_numpy(cut[1]).to(dtype), want_jm, atol=100 * TOL[dtype], rtol=0)


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
    (whole, cut), _ = _run_both(n, gates, 5, torch.complex128, batch=1)
    for a, b in zip(whole, cut):
        np.testing.assert_allclose(b, a, atol=1e-11, rtol=0)


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
