"""simulate / final_state: basics, initial states, broadcasting, dtypes, CUDA."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from simhelpers import TOL, assert_close, make_circuit, random_ops, reference_state

from qhybrid.sim import Circuit, Measurement, Observable, Operation, final_state, simulate


def test_bell_expval():
    c = Circuit(2, (Operation("Hadamard", (0,)), Operation("CNOT", (0, 1))),
                (Measurement("expval", Observable.pauli({"ZZ": 1.0, "XX": 0.5})),))
    (v,) = simulate(c)
    np.testing.assert_allclose(v.numpy(), [1.5], atol=1e-12)


def test_initial_state_and_batch():
    psi = np.array([0, 1, 0, 0], dtype=complex)
    c = Circuit(2, (Operation("RX", (0,), (np.array([0.0, np.pi]),)),), (Measurement("probs"),), initial_state=psi)
    (p,) = simulate(c)
    np.testing.assert_allclose(p.numpy(), [[0, 1, 0, 0], [0, 0, 0, 1]], atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.complex128, torch.complex64])
def test_dtype_tolerance(dtype, rng):
    c = make_circuit(6, random_ops(6, 50, rng))
    s = final_state(c, dtype=dtype)
    assert s.dtype == dtype
    assert_close(s.to(torch.complex128), reference_state(c), TOL[dtype] * 10)


@pytest.mark.cuda
def test_cuda_matches_cpu(rng):
    c = make_circuit(6, random_ops(6, 50, rng))
    assert_close(final_state(c, device="cuda").cpu(), final_state(c), 1e-10)


@pytest.mark.parametrize("batch", [None, 2])
def test_ladder_then_layer_read_through_with_a_cache(rng, batch):
    """With a cache, a CNOT ladder followed by a layer is run as the layer reading through the
    ladder into a spare buffer: layers of low and high wires, of high wires only, a ladder at the
    end; the state a call returns is never the buffer the cache keeps for the next call."""
    from qhybrid.sim.cache import Cache

    n = 15

    def angle():
        return rng.uniform(-3, 3, size=batch) if batch else float(rng.uniform(-3, 3))

    def circuit(shifts):
        ops = []
        for shift, wires in shifts:
            ops += [Operation(g, (w,), (angle(),)) for w in wires for g in ("RY", "RZ")]
            ops += [Operation("CNOT", (w, (w + shift) % n)) for w in range(n)]
        return make_circuit(n, ops)

    c1 = circuit([(1, range(n)), (2, range(n)), (3, [0, 1]), (1, range(n))])
    c2 = circuit([(2, range(n)), (1, [1, 5, 13])])
    cache = Cache()
    s1 = final_state(c1, cache=cache)
    assert_close(s1, reference_state(c1), 1e-10)
    kept = s1.clone()
    for c in (c2, c1, c2):
        s = final_state(c, cache=cache)
        assert_close(s, reference_state(c), 1e-10)
    assert torch.equal(s1, kept)
    assert any(k[0] == "forward_spare" for k in cache._items)


def _ladder_circuit(n, pieces, rng, batch=None):
    """``pieces``: ``("layer", wires)``, ``("ring", shift)`` (a CNOT ring, one ladder) or ``("zz",)``
    (a diagonal block of IsingZZ), in order."""
    def angle():
        return rng.uniform(-3, 3, size=batch) if batch else float(rng.uniform(-3, 3))

    ops = []
    for piece in pieces:
        if piece[0] == "layer":
            ops += [Operation(g, (w,), (angle(),)) for w in piece[1] for g in ("RX", "RY", "RZ")]
        elif piece[0] == "ring":
            ops += [Operation("CNOT", (w, (w + piece[1]) % n)) for w in range(n)]
        else:
            ops += [Operation("IsingZZ", (w, (w + 1) % n), (angle(),)) for w in range(n)]
    return make_circuit(n, ops)


@pytest.mark.parametrize("batch", [None, 2])
@pytest.mark.parametrize("n", [5, 15])
def test_layer_writes_through_the_ladder_after_it(rng, n, batch):
    """With a cache, a layer followed by a CNOT ladder that no layer reads through runs as the
    layer's last pass writing through the ladder's map: at the end, before a diagonal block,
    after a ladder it reads through; layers of one pass (low or high wires only) and of two."""
    from qhybrid.sim.cache import Cache
    from qhybrid.sim.simulate import ladders_around_layer

    low, high = list(range(n - 3, n)), list(range(min(3, n)))
    shapes = [
        [("layer", range(n)), ("ring", 1), ("layer", range(n)), ("ring", 2)],
        [("layer", range(n)), ("ring", 1), ("layer", high), ("ring", 1), ("zz",), ("ring", 3), ("layer", low),
         ("ring", 1)],
        [("zz",), ("layer", low), ("ring", 2), ("layer", range(n)), ("ring", 1), ("layer", high), ("ring", 1),
         ("layer", range(n)), ("ring", 1)],
    ]
    cache = Cache()
    for shape in shapes + shapes[::-1]:
        c = _ladder_circuit(n, shape, rng, batch)
        for dtype in (torch.complex128, torch.complex64):
            assert_close(final_state(c, dtype=dtype, cache=cache).to(torch.complex128), reference_state(c),
                         TOL[dtype])
    steps = [type("S", (), {"kind": k})() for k in ("layer", "perm", "layer", "perm", "diag", "layer", "perm")]
    assert [ladders_around_layer(steps, k)[3] for k in (0, 1, 4, 5)] == [1, 3, 0, 2]
    assert ladders_around_layer(steps, 1)[2] is steps[3] and ladders_around_layer(steps, 0)[2] is None


@pytest.mark.slow
def test_three_pass_layer_reads_and_writes_through_ladders(rng):
    """At 21 wires a full layer takes three passes: the first reads through the ladder before it,
    the last writes through the one after it, complex64 and complex128 against the reference."""
    from qhybrid.sim.cache import Cache

    n = 21
    c = _ladder_circuit(n, [("layer", range(n)), ("ring", 1), ("layer", range(n)), ("ring", 1)], rng)
    ref = reference_state(c)
    for dtype in (torch.complex128, torch.complex64):
        assert_close(final_state(c, dtype=dtype, cache=Cache()).to(torch.complex128), ref, TOL[dtype])
