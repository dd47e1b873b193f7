"""The pad after each plane of a large planar state (sim/batched.py ``as_planes``): no two planes
of a batch lie a multiple of 256 MiB apart, and the kernels on padded planes give the unpadded
results exactly, never touching the pad."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from batchedhelpers import random_unitaries

from qhybrid.sim import batched, batchedtorch
from qhybrid.sim.jit import HAVE_NUMBA
from test_gateblocks import dressed_gates


@pytest.mark.parametrize("itemsize", [8, 4])
@pytest.mark.parametrize("n", [24, 25, 26, 27, 28])
def test_no_two_planes_of_a_large_batch_lie_a_multiple_of_256_mib_apart(n, itemsize):
    m = batched.plane_len(1 << n, itemsize)
    assert 0 < m - (1 << n) <= 4160 // itemsize  # a small pad
    for k in range(1, 2 * 16):  # re/im of one sample, and any two planes of a batch of 16
        assert (k * m * itemsize) % (1 << 28) != 0, k
    assert batched.plane_len(1 << 10, itemsize) == 1 << 10  # small planes: no pad
    assert batched.state_size(np.empty((1, 2, m), np.uint8)) == 1 << n


def _chunk(planes, factors, mats, obs, gates, n):
    """A training sample's kernels in turn on ``planes`` (psi) and a lambda like them: the
    states after the forward pass, rho, the sweep's matrices, the factor gradients."""
    lam = np.full_like(planes, np.nan)
    blks = batched.blocks(n, gates, max_bits=7)
    batched.product(planes, factors)
    batched.run(planes, mats, blks)
    fwd = planes[:, :, :1 << n].copy()
    rho = batched.observe(planes, lam, obs)
    jm = batched.sweep(planes, lam, mats, blks)
    swept = planes[:, :, :1 << n].copy(), lam[:, :, :1 << n].copy()
    jf = batched.factor_gradients(lam, factors)
    return (fwd, rho, jm) + swept + (jf,), lam


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
@pytest.mark.parametrize("dtype", [torch.complex128, torch.complex64])
def test_padded_planes_give_the_unpadded_results_and_leave_the_pad(monkeypatch, dtype):
    n, b = 12, 3
    gen = torch.Generator().manual_seed(4)
    raw = torch.randn((b, n, 2, 2), generator=gen, dtype=torch.float64)
    factors = torch.complex(raw[..., 0], raw[..., 1])
    factors = (factors / factors.norm(dim=2, keepdim=True)).to(dtype).numpy()
    gates = dressed_gates(n)
    mats = random_unitaries(len(gates), dtype, 6).numpy()
    obs = random_unitaries(1, dtype, 4)[0]
    obs = (obs + obs.conj().T).numpy()
    real = np.float64 if dtype == torch.complex128 else np.float32
    plain, _ = _chunk(np.full((b, 2, 1 << n), np.nan, real), factors, mats, obs, gates, n)
    monkeypatch.setattr(batched, "PAD_FROM", 0)  # pad planes of 4096 amplitudes
    buf = np.empty(b * batched.plane_len(1 << n, np.dtype(real).itemsize), np.result_type(real, 1j))
    buf.view(real)[:] = np.nan
    planes = batched.as_planes(buf, b, 1 << n, real)
    assert planes.shape[2] > 1 << n
    padded, lam = _chunk(planes, factors, mats, obs, gates, n)
    for want, got in zip(plain, padded):
        np.testing.assert_array_equal(got, want)
    assert np.isnan(planes[:, :, 1 << n:]).all() and np.isnan(lam[:, :, 1 << n:]).all()
    # and the unpadded run is the torch reference's
    want = batchedtorch.product_state(torch.from_numpy(factors), torch.empty(b << n, dtype=dtype),
                                      torch.empty(b << n, dtype=dtype))
    batchedtorch.run(want, torch.from_numpy(mats), gates, n, torch.empty(b << n, dtype=dtype))
    got = torch.complex(torch.from_numpy(plain[0][:, 0]), torch.from_numpy(plain[0][:, 1]))
    torch.testing.assert_close(got, want, atol=1e-11 if dtype == torch.complex128 else 1e-4, rtol=0)
