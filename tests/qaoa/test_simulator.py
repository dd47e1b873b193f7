"""QAOA energies and gradients against PennyLane, and the fused kernels against the torch reference."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from qhybrid.errors import DeviceError, MemoryLimitError, OperationError
from qhybrid.qaoa import QAOA

from kernelsets import device_for
from qaoa_oracle import pennylane_energy_and_grad, random_graph

# (n, m, p, problem, weighted): a handful of sizes, p = 1..4, both problems, weighted and not
CASES = [
    (2, 1, 1, "maxcut", False),
    (5, 6, 2, "maxcut", True),
    (7, 10, 3, "maxclique", False),
    (9, 14, 4, "maxcut", False),
    (10, 14, 2, "maxclique", False),
    (11, 16, 1, "maxcut", True),
    (12, 18, 3, "maxcut", False),
]


def _params(p, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, size=(2, p))


@pytest.mark.parametrize("n,m,p,problem,weighted", CASES)
def test_matches_pennylane_complex128(kernel_set, n, m, p, problem, weighted):
    g = random_graph(n, m, seed=n + p, weighted=weighted)
    x = _params(p, seed=n)
    e_ref, g_ref = pennylane_energy_and_grad(g, x, problem, weighted)
    q = QAOA(g, problem=problem, backend=kernel_set, device=device_for(kernel_set))
    e, grad = q.energy_and_grad(x)
    assert abs(e - e_ref) < 1e-10
    np.testing.assert_allclose(grad, g_ref, atol=1e-10, rtol=0)
    assert abs(q.energy(x) - e_ref) < 1e-10


@pytest.mark.parametrize("n,m,p,problem,weighted", [CASES[1], CASES[2], CASES[6]])
def test_matches_pennylane_complex64(kernel_set, n, m, p, problem, weighted):
    g = random_graph(n, m, seed=n + p, weighted=weighted)
    x = _params(p, seed=n)
    e_ref, g_ref = pennylane_energy_and_grad(g, x, problem, weighted)
    e, grad = QAOA(g, problem=problem, backend=kernel_set, device=device_for(kernel_set),
                   dtype="complex64").energy_and_grad(x)
    assert abs(e - e_ref) < 1e-5
    np.testing.assert_allclose(grad, g_ref, atol=1e-5, rtol=0)


@pytest.mark.parametrize("n,block_bits,problem,dtype,tol,stored", [
    (15, 5, "maxcut", "complex128", 1e-11, True),
    (15, 5, "maxcut", "complex128", 1e-11, False),
    (15, 5, "maxcut", "complex64", 2e-4, True),
    (16, 9, "maxclique", "complex128", 1e-11, True),
    (16, 9, "maxclique", "complex128", 1e-11, False),
    (17, None, "maxcut", "complex64", 2e-4, False),
    (17, None, "maxcut", "complex128", 1e-11, True),
])
def test_fused_kernels_match_reference(n, block_bits, problem, dtype, tol, stored):
    """Cache-block layouts (high pass with many rows, narrow tiles) and both adjoint sweeps
    (stored states / un-apply) against the torch reference."""
    g = random_graph(n, int(1.5 * n), seed=n)
    x = _params(3, seed=1)
    ref = QAOA(g, problem=problem, backend="torch", dtype=dtype)
    fast = QAOA(g, problem=problem, backend="numba", dtype=dtype, block_bits=block_bits)
    if not stored:
        fast.engine.STORE_BUDGET = 0  # force the two-state un-apply sweep
    e0, g0 = ref.energy_and_grad(x)
    e1, g1 = fast.energy_and_grad(x)
    scale = max(1.0, abs(e0))
    assert abs(e0 - e1) < tol * scale
    np.testing.assert_allclose(g1, g0, atol=tol * scale, rtol=0)
    np.testing.assert_allclose(fast.state(x), ref.state(x), atol=tol, rtol=0)


def test_batch_equals_single_calls(kernel_set):
    g = random_graph(8, 12, seed=3)
    xs = np.stack([_params(2, seed=s) for s in range(4)])
    q = QAOA(g, backend=kernel_set, device=device_for(kernel_set))
    es, gs = q.energy_and_grad(xs)
    assert es.shape == (4,) and gs.shape == (4, 2, 2)
    for i in range(4):
        e, grad = q.energy_and_grad(xs[i])
        assert es[i] == pytest.approx(e, abs=1e-12)
        np.testing.assert_allclose(gs[i], grad, atol=1e-12)
    np.testing.assert_allclose(q.energy(xs), es, atol=1e-12)


def test_probabilities_most_likely_and_ratio():
    g = random_graph(6, 8, seed=2)
    q = QAOA(g)
    x = _params(2, seed=5)
    probs = q.probabilities(x)
    assert probs.shape == (64,) and float(probs.sum()) == pytest.approx(1.0, abs=1e-12)
    top = q.most_likely(x, k=3)
    assert [t["probability"] for t in top] == sorted((t["probability"] for t in top), reverse=True)
    assert top[0]["probability"] == pytest.approx(float(probs.max()))
    costs = q.diagonal.dense()
    assert float(probs @ costs) == pytest.approx(q.energy(x), abs=1e-12)
    assert q.approximation_ratio(q.optimum) == 1.0
    assert 0.0 < q.approximation_ratio(q.energy(x)) < 1.0
    assert all(float(costs[int(b, 2)]) == q.optimum for b in q.optimal_bitstrings())


def test_refusals():
    g = [(0, 1), (1, 2)]
    with pytest.raises(MemoryLimitError, match="bytes"):
        QAOA(g, memory_limit=10)
    with pytest.raises(MemoryLimitError, match=r"30 qubits needs about"):
        QAOA([(0, 29)], memory_limit=2**30)
    with pytest.raises(OperationError, match="complex64"):
        QAOA(g, dtype="float32")
    with pytest.raises(OperationError, match="numba, torch"):
        QAOA(g, backend="fast")
    with pytest.raises(OperationError, match=r"\(2, p\)"):
        QAOA(g).energy([0.1, 0.2])
    if not torch.cuda.is_available():
        with pytest.raises(DeviceError, match="CUDA"):
            QAOA(g, device="cuda")


@pytest.mark.cuda
@pytest.mark.parametrize("dtype,tol", [("complex128", 1e-10), ("complex64", 1e-4)])
def test_cuda_matches_cpu(dtype, tol):
    g = random_graph(12, 18, seed=7)
    x = _params(2, seed=7)
    e0, g0 = QAOA(g, backend="numba").energy_and_grad(x)
    e1, g1 = QAOA(g, device="cuda", dtype=dtype).energy_and_grad(x)
    assert abs(e0 - e1) < tol * 10
    np.testing.assert_allclose(g1, g0, atol=tol * 10)


def test_most_likely_symmetric_half_matches_reference():
    g = random_graph(9, 13, seed=4)
    x = _params(2, seed=9)
    fast = QAOA(g, backend="numba").most_likely(x, 6)
    ref = QAOA(g, backend="torch").most_likely(x, 6)
    assert [r["probability"] for r in fast] == pytest.approx([r["probability"] for r in ref], abs=1e-12)
    probs = QAOA(g, backend="torch").probabilities(x)
    for r in fast:  # ties may come in either order; each entry must be right
        assert float(probs[int(r["bitstring"], 2)]) == pytest.approx(r["probability"], abs=1e-12)


@pytest.mark.parametrize("problem", ["maxcut", "maxclique"])
def test_torch_sweeps_agree(problem):
    """The torch reference's stored-state sweep against its two-state un-apply sweep."""
    g = random_graph(11, 16, seed=2)
    x = _params(3, seed=1)
    unapply = QAOA(g, problem=problem, backend="torch")
    unapply.engine.STORE_TORCH = False
    stored = QAOA(g, problem=problem, backend="torch")
    assert stored.engine.stored(3) and not unapply.engine.stored(3)
    e0, g0 = unapply.energy_and_grad(x)
    e1, g1 = stored.energy_and_grad(x)
    assert abs(e0 - e1) < 1e-12
    np.testing.assert_allclose(g1, g0, atol=1e-12, rtol=0)


_ONLY_NEEDED = """
import json, sys
import numpy as np
from qhybrid.qaoa import QAOA
from qhybrid.qaoa import numba_kernels as nk
q = QAOA([(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (1, 4)])
q.energy_and_grad(np.full((2, 2), 0.3))
kernels = ("fwd_low", "fwd_last_low", "fwd_high", "bwd_high", "bwd_low", "bwd_high_stored", "bwd_low_stored")
print(json.dumps({"compiled": sorted(k for k in kernels if getattr(nk, k).signatures),
                  "dtypes": sorted({str(s[0].dtype) for k in kernels for s in getattr(nk, k).signatures}),
                  "torch": "torch" in sys.modules}))
"""


def test_only_the_kernels_a_sweep_calls_are_compiled_or_loaded():
    """A complex128 Max-Cut energy+gradient (stored-state sweep) in a fresh process loads five
    kernels, for complex128 only, and never torch."""
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _ONLY_NEEDED], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.splitlines()[-1])
    sweep = ["bwd_high_stored", "bwd_low_stored", "fwd_high", "fwd_last_low", "fwd_low"]
    assert got["compiled"] == sweep
    assert got["dtypes"] == ["complex128"] and got["torch"] is False


@pytest.mark.parametrize("stored", [True, False])
def test_threaded_sweep_matches_one_thread_and_the_reference(monkeypatch, stored):
    """Several Python threads taking blocks and tiles from the shared counter give the one-thread
    sweep's energy and gradient (and the torch reference's)."""
    from qhybrid.qaoa import numba_kernels as nk

    g = random_graph(12, 18, seed=4)
    x = _params(2, seed=3)
    one = QAOA(g, block_bits=6)
    many = QAOA(g, block_bits=6)
    monkeypatch.setattr(nk, "num_threads", lambda: 3)  # three scratch rows, whatever the machine has
    many.engine.SERIAL_BITS = 0
    monkeypatch.setattr("qhybrid.sim.pool.threads_for", lambda size, threads=None: 3)
    if not stored:
        one.engine.STORE_BUDGET = many.engine.STORE_BUDGET = 0
    e1, g1 = one.energy_and_grad(x)
    e3, g3 = many.energy_and_grad(x)
    assert many.engine.threads() == 3 and one.engine.threads() == 1
    e0, g0 = QAOA(g, backend="torch").energy_and_grad(x)
    assert abs(e3 - e1) < 1e-12 and abs(e3 - e0) < 1e-10
    np.testing.assert_allclose(g3, g1, atol=1e-12, rtol=0)
    np.testing.assert_allclose(g3, g0, atol=1e-10, rtol=0)


def test_top_of_ranks_in_chunks_like_one_sort():
    from qhybrid.qaoa.sweep import top_of

    rng = np.random.default_rng(3)
    psi = (rng.normal(size=1000) + 1j * rng.normal(size=1000)).astype(np.complex128)
    psi[[5, 700, 999]] = psi[300]  # ties across chunks: the lower index first
    probs = psi.real**2 + psi.imag**2
    order = np.lexsort((np.arange(psi.size), -probs))[:9]
    expected = [(float(probs[i]), int(i)) for i in order]
    for chunk in (7, 64, 1000, 4096):
        assert top_of(psi, 9, chunk=chunk) == expected
    assert top_of(psi[:3], 9) == [(float(probs[i]), int(i)) for i in np.lexsort((np.arange(3), -probs[:3]))]


def test_most_likely_makes_no_state_sized_temporary(monkeypatch):
    # at 30 nodes the half state is 8 GiB: ranking it through float64 copies of the whole state made
    # three 4 GiB temporaries, more than this 24 GiB machine had left
    import tracemalloc

    from qhybrid.qaoa import sweep

    monkeypatch.setattr(sweep, "TOP_CHUNK", 2**16, raising=False)
    q = QAOA(random_graph(21, 30, seed=1))
    x = _params(1, seed=2)
    q.energy(x)
    tracemalloc.start()
    try:
        q.most_likely(x, 64)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    half = 2**20 * 16
    assert peak < half / 2


def test_memory_counts_the_simulated_half_and_the_diagonal_build():
    from qhybrid.qaoa import memory

    # Max-Cut at 30 nodes: two half states (8 GiB each), the uint8 index and its int16 half copy;
    # the diagonal's int32 build (5 GiB) comes first and frees before the states exist
    assert memory.required_bytes(30, symmetric=True, layers=2) == 2 * 2**29 * 16 + 2**30 + 2 * 2**29
    assert memory.required_bytes(30) == 2 * 2**30 * 16 + 2**30 + 2 * 2**30  # no symmetry: full states
    # small: the stored-state sweep's three extra states are kept (they fit STORE_BUDGET)
    assert memory.required_bytes(14, symmetric=True, layers=2) == 2**14 + 2 * 2**13 + 5 * 2**13 * 16
