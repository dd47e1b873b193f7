"""The batched numba kernels (sim/batched.py) against the generic paths: the reference kernels
of sim/kernels.py for gates, sim/batchedtorch.py for the sweep and the factor gradients."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from batchedhelpers import random_states as _states
from batchedhelpers import random_unitaries as _unitaries
from batchedhelpers import reference_gate as _reference

from qhybrid.sim import batchedtorch, registry
from qhybrid.sim.jit import HAVE_NUMBA

pytestmark = pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
if HAVE_NUMBA:
    from qhybrid.sim import batched

N = 5
GATES = ((-1, 0), (-1, 2), (-1, 4), (0, 3), (3, 0), (1, 2), (4, 1), (2, 4), (4, 3))
TOL = {torch.complex128: 1e-10, torch.complex64: 1e-5}


def _planes(state):
    arr = state.numpy()
    return batched.to_planes(arr, np.empty_like(arr))


def _complex(planes, dtype):
    out = torch.empty((planes.shape[0], planes.shape[2]), dtype=dtype)
    batched.from_planes(planes, out.numpy())
    return out


@pytest.mark.parametrize("dtype", [torch.complex128, torch.complex64])
@pytest.mark.parametrize("gate", GATES)
def test_run_matches_reference_kernels(gate, dtype):
    state, u = _states(3, N, dtype), _unitaries(1, dtype)
    planes = _planes(state)
    batched.run(planes, u.numpy(), batched.blocks(N, [gate]))
    expected = _reference(state, u[0], *gate, N)
    torch.testing.assert_close(_complex(planes, dtype), expected, atol=TOL[dtype], rtol=0)


def _sweep_both(batch, dtype, n=N, gates=GATES, max_bits=None):
    psi, lam, mats = _states(batch, n, dtype, 2), _states(batch, n, dtype, 3), _unitaries(len(gates), dtype)
    want_psi, want_lam = psi.clone(), lam.clone()
    want = batchedtorch.sweep(want_psi, want_lam, mats, gates, n, torch.empty(psi.numel(), dtype=dtype))
    p, lp = _planes(psi), _planes(lam)
    got = batched.sweep(p, lp, mats.numpy(), batched.blocks(n, gates, max_bits=max_bits or n))
    return (got, _complex(p, dtype), _complex(lp, dtype)), (want, want_psi, want_lam)


@pytest.mark.parametrize("dtype", [torch.complex128, torch.complex64])
def test_sweep_matches_the_torch_sweep(dtype):
    (got, psi, lam), (want, want_psi, want_lam) = _sweep_both(4, dtype)
    tol = TOL[dtype]
    torch.testing.assert_close(psi, want_psi, atol=tol, rtol=0)
    torch.testing.assert_close(lam, want_lam, atol=tol, rtol=0)
    torch.testing.assert_close(torch.from_numpy(got).to(dtype), want, atol=4 * tol, rtol=0)
    assert got.shape == (4, len(GATES), 2, 2)  # per sample


@pytest.mark.parametrize("threads, batch", [(2, 5), (3, 7), (2, 1), (3, 2)])
def test_thread_splits_agree_with_one_thread(monkeypatch, threads, batch):
    """Slices of the batch (batch >= threads) and gates split between threads (batch smaller)."""
    one = _sweep_both(batch, torch.complex128, n=6, gates=GATES + ((5, 0), (-1, 5)), max_bits=4)[0]
    monkeypatch.setattr(batched, "threads_for", lambda size: threads)
    monkeypatch.setattr(batched, "SPLIT_MIN", 0)
    many = _sweep_both(batch, torch.complex128, n=6, gates=GATES + ((5, 0), (-1, 5)), max_bits=4)[0]
    np.testing.assert_allclose(many[0], one[0], atol=1e-12, rtol=0)
    for a, b in zip(many[1:], one[1:]):
        torch.testing.assert_close(a, b, atol=1e-12, rtol=0)
    state, mats = _states(batch, 6, torch.complex128), _unitaries(3, torch.complex128)
    lay = batched.blocks(6, [(-1, 1), (2, 5), (5, 0)], max_bits=4)
    split = _planes(state)
    batched.run(split, mats.numpy(), lay)
    monkeypatch.setattr(batched, "threads_for", lambda size: 1)
    serial = _planes(state)
    batched.run(serial, mats.numpy(), lay)
    np.testing.assert_array_equal(split, serial)


@pytest.mark.parametrize("dtype", [torch.complex128, torch.complex64])
def test_factor_gradients_match_torch(dtype):
    gen = torch.Generator().manual_seed(4)
    raw = torch.randn((3, N, 2, 2), generator=gen, dtype=torch.float64)
    factors = torch.complex(raw[..., 0], raw[..., 1]).to(dtype)
    lam = _states(3, N, dtype, 5)
    got = batched.factor_gradients(_planes(lam), factors.numpy())  # consumes the planes
    want = batchedtorch.factor_gradients(lam, factors)
    torch.testing.assert_close(torch.from_numpy(got), want, atol=TOL[dtype], rtol=0)


def test_layout_and_registration():
    lo, hi, cbit, tbit, n_outer = batched.layout(4, [(-1, 3), (0, 2)])
    assert lo.tolist() == [0, 1] and hi.tolist() == [-1, 3] and cbit.tolist() == [0, 8]
    assert tbit.tolist() == [1, 2] and n_outer.tolist() == [8, 2]
    assert {"batched_run", "batched_sweep", "batched_factor_gradients"} <= set(registry.names())


LAYER_CALLS = """
import json, sys
import numpy as np, torch
from qhybrid.sim import batched, registry
from qhybrid.qml import QuantumLayer
dtype = {"complex128": torch.complex128, "complex64": torch.complex64}[sys.argv[1]]
real = np.float64 if dtype == torch.complex128 else np.float32
for name in batched.KERNELS:
    batched.compile_kernel(name, real)
layer = QuantumLayer(5, dtype=dtype, generator=torch.Generator().manual_seed(3), kernel="numba")
x = torch.rand(6, 5, dtype=layer.rotation.dtype, generator=torch.Generator().manual_seed(4))
layer(x).sum().backward()
with torch.no_grad():
    layer(x[:1])
print(json.dumps({name: len(registry.kernel(name, 0).signatures) for name in batched.KERNELS}))
"""


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_compile_kernel_compiles_the_signatures_the_layer_calls(dtype, tmp_path):
    """What a child compiles ahead (compile_kernel) is what the layer runs: forward, backward and a
    smaller batch add no signature (else the job would compile its own beside the child's)."""
    import json
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    env["NUMBA_CACHE_DIR"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-c", LAYER_CALLS, dtype], capture_output=True, text=True,
                         timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.splitlines()[-1]) == {name: 1 for name in batched.KERNELS}


def test_lock_names_and_a_bad_kernel_name():
    assert batched.lock_name("batched_run", np.float64) == "batched_run-float64"
    assert batched.lock_name("batched_factor_gradients", np.complex64) == "batched_factor_gradients-float32"
    with pytest.raises(ValueError, match="valid are batched_product"):
        batched.compile_kernel("batched_nothing", np.float64)


def test_a_kernels_first_real_call_runs_outside_the_compile_lock(monkeypatch):
    """Only the two-wire load call runs under kernel_cache.compiling: the caller's own call (at 26
    wires, gigabytes faulted in) must not hold another rank waiting."""
    import contextlib

    held, seen = [], []

    @contextlib.contextmanager
    def compiling(name):
        held.append(name)
        yield
        held.remove(name)

    real_each = batched._each

    def each(planes, *args):
        seen.append((planes.shape[2], tuple(held)))
        return real_each(planes, *args)

    monkeypatch.setattr(batched.kernel_cache, "compiling", compiling)
    monkeypatch.setattr(batched, "_each", each)
    monkeypatch.setattr(batched, "_USED", set())
    state = _states(2, N, torch.complex128)
    planes = _planes(state)
    factors = np.full((2, N, 2), 2 ** -0.5, np.complex128)
    batched.product(planes, factors)
    batched.product(planes, factors)
    assert seen == [(4, ("batched_product-float64",)), (1 << N, ()), (1 << N, ())]
