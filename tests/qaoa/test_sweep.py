"""The fused CPU sweep on its own: layout, named buffers, the store limit, and both sweeps against the reference."""
from __future__ import annotations

import numpy as np
import pytest

from qhybrid.qaoa import QAOA, cost_diagonal
from qhybrid.qaoa import numba_kernels as nk
from qhybrid.qaoa.sweep import FusedSweep, layout, plan, popcount

from qaoa_oracle import random_graph


def test_popcount_counts_bits():
    assert popcount(3).tolist() == [bin(i).count("1") for i in range(8)]


def test_layout_narrows_tiles_until_every_thread_has_two(monkeypatch):
    monkeypatch.setattr(nk, "num_threads", lambda: 4)
    k, w, nt = layout(12, "complex128", block_bits=6)
    assert (k, nt) == (6, 4) and w == 8 and 2**k // w >= 2 * nt  # 64 columns, 8 tiles of 8
    assert layout(3, "complex64") == (3, 1, 4)  # small states: one block of every bit
    assert layout(12, "complex128", block_bits=6, tile_width=32)[1] == 8  # an override is narrowed too


@pytest.mark.parametrize("problem", ["maxcut", "maxclique"])
def test_buffers_are_views_of_one_state_each(problem):
    d = cost_diagonal(random_graph(9, 12, seed=1), problem)
    b = plan(d, symmetric=problem == "maxcut", dtype="complex64", block_bits=5)
    ne = 8 if problem == "maxcut" else 9
    assert b.half == 2**ne == b.psi.size == b.lam.size and b.fold == (2.0 if problem == "maxcut" else 1.0)
    assert np.shares_memory(b.psi, b.psi_floats) and b.psi_floats.dtype == np.float32
    assert np.shares_memory(b.tiles, b.tiles_floats) and b.tiles.shape == (b.threads, 2, b.rows * b.tile_width)
    assert b.rows == 2 ** (ne - b.low_bits) == b.z_high.size == b.high_parity.size
    assert b.z_low.shape == (2, 2**b.low_bits) and b.block_sums.size == b.half >> b.low_bits


def test_stores_follow_the_limit_and_are_kept():
    sweep = FusedSweep(cost_diagonal(random_graph(8, 10, seed=2), "maxcut"), symmetric=True, dtype="complex128")
    need = (2 * 3 + 1) * sweep.buffers.half * 16 + sweep.buffers.level_index.nbytes
    assert sweep.stores(3, need - 1) is None
    stores = sweep.stores(3, need)
    assert len(stores) == 5 and sweep.stores(2, need) is stores  # grown once, reused by shorter circuits


@pytest.mark.parametrize("stored", [True, False])
def test_sweep_matches_the_reference(stored):
    g = random_graph(10, 15, seed=3)
    x = np.random.default_rng(0).uniform(-1, 1, size=(2, 3))
    sweep = FusedSweep(cost_diagonal(g, "maxclique"), symmetric=False, dtype="complex128", block_bits=4)
    e, grad = sweep.run(x, grad=True, threads=1, store_limit=2**40 if stored else 0)
    e0, g0 = QAOA(g, problem="maxclique", backend="torch").energy_and_grad(x)
    assert abs(e - e0) < 1e-10
    np.testing.assert_allclose(grad, g0, atol=1e-10, rtol=0)
    ref_state = QAOA(g, problem="maxclique", backend="torch").state(x)
    assert sweep.run(x, grad=False, threads=1, store_limit=0) == (pytest.approx(e0, abs=1e-10), None)
    np.testing.assert_allclose(sweep.final_state(), ref_state, atol=1e-10, rtol=0)


def test_a_first_sweep_compiles_its_kernels_before_the_entry_and_agrees():
    """A sweep made before the butterfly entry is loaded (butterflies None) first runs every kernel
    with no work (the states untouched), then asks for the entry, and gives the same answers."""
    from qhybrid.qaoa.sweep import _compile_only

    g = random_graph(9, 13, seed=4)
    x = np.random.default_rng(1).uniform(-1, 1, size=(2, 2))
    d = cost_diagonal(g, "maxcut")
    want = FusedSweep(d, symmetric=True, dtype="complex64", block_bits=4).run(x, grad=True, threads=1,
                                                                              store_limit=2**40)
    sweep = FusedSweep(d, symmetric=True, dtype="complex64", block_bits=4)
    b = sweep.buffers
    b.psi[:], b.lam[:] = 1.0, 2.0
    sweep._sweep(x, grad=True, run=_compile_only, store_limit=2**40)
    assert (b.psi == 1.0).all() and (b.lam == 2.0).all()
    address, b.butterflies = b.butterflies, None
    e, grad = sweep.run(x, grad=True, threads=1, store_limit=2**40)
    assert b.butterflies == address and abs(e - want[0]) < 1e-5
    np.testing.assert_allclose(grad, want[1], atol=1e-5, rtol=0)


def test_layout_caps_the_high_pass_rows():
    """Past 2**(14 + HIGH_BITS) amplitudes the blocks grow, the high pass keeps 2**HIGH_BITS rows and
    its tiles' runs stay 32 amplitudes long (complex128); below, the cache-sized blocks are kept."""
    from qhybrid.qaoa.sweep import HIGH_BITS

    assert layout(23, "complex128")[:2] == (14, 32)  # 24 Max-Cut nodes: as before the cap
    for ne in range(14 + HIGH_BITS + 1, 34):
        k, w, _ = layout(ne, "complex128")
        assert ne - k == HIGH_BITS and w == 32
    assert layout(18, "complex128", high_bits=2)[0] == 16  # the test knob: the high pass's bits
    assert layout(18, "complex128", block_bits=6, high_bits=2)[0] == 6  # block_bits decides first


@pytest.mark.parametrize("stored", [True, False])
def test_large_blocks_few_rows_match_the_reference(stored):
    """The capped layout's shape at a small size: 2**16-amplitude blocks (the low pass's butterflies at
    strides compiled only in their run-time form) and a high pass of 4 rows, against the torch reference."""
    g = random_graph(19, 28, seed=5)
    x = np.random.default_rng(2).uniform(-1, 1, size=(2, 2))
    sweep = FusedSweep(cost_diagonal(g, "maxcut"), symmetric=True, dtype="complex128", high_bits=2)
    assert (sweep.buffers.low_bits, sweep.buffers.rows) == (16, 4)
    e, grad = sweep.run(x, grad=True, threads=2, store_limit=2**40 if stored else 0)
    ref = QAOA(g, backend="torch")
    e0, g0 = ref.energy_and_grad(x)
    assert abs(e - e0) < 1e-10 * max(1.0, abs(e0))
    np.testing.assert_allclose(grad, g0, atol=1e-10 * max(1.0, abs(e0)), rtol=0)
    sweep.run(x, grad=False, threads=2, store_limit=0)
    np.testing.assert_allclose(sweep.final_state(), ref.state(x), atol=1e-12, rtol=0)
