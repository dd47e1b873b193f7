"""CNOT / SWAP, ladders and bit-flip Pauli words in ``benchmarks/gpu_check.py``'s Triton section.

- **check** (:func:`check_index`): the Triton set with the chosen tiles against the torch set on
  the same device: CNOTs and SWAPs, a short ladder (gate by gate) and a long one (one gather),
  the gather into another buffer, a layer read and written through ladders, the engine's forward
  pass through ladders (with a cache: the spare buffer), Pauli expectations with bit flips and a
  sum of words applied into ``out``.
- **passes** (:func:`passes`): their passes for the per-pass bandwidth table.
"""
from __future__ import annotations

import numpy as np
import torch


def _state(rng, n, dtype, device, b=2):
    s = torch.tensor(rng.normal(size=(b, 2**n)) + 1j * rng.normal(size=(b, 2**n)), dtype=dtype, device=device)
    return s / torch.linalg.vector_norm(s, dim=1, keepdim=True)


def _ladder(swaps, n, dtype, device):
    from qhybrid.sim.bind import ladder_tables, permutation_step

    return permutation_step(swaps, ladder_tables(swaps, n), dtype=dtype, device=device)


def _diff(a, b) -> float:
    return float((a.to(torch.complex128) - b.to(torch.complex128)).abs().max())


def _moves(tri, ref, n, dt, dev, rng) -> dict:
    """Max |diff| of each index move on the triton set vs the torch set."""
    psi = _state(rng, n, dt, dev)
    errs, a, b = {}, psi.clone(), psi.clone()
    for wires, ctrl in (((n - 1, 0), True), ((0, n - 1), True), ((1, n - 2), False)):
        tri.apply_swap(a, wires, ctrl, n)
        ref.apply_swap(b, wires, ctrl, n)
    errs["cnot/swap"] = _diff(a, b)
    short = (((1, 0), True), ((0, n - 1), False), ((n - 1, 2), True))
    ring = tuple(((w, (w + 1) % n), True) for w in range(n)) + (((1, n - 3), False),)
    for label, swaps in (("short ladder", short), ("long ladder", ring)):
        step = _ladder(swaps, n, dt, dev)
        for s in (step, step.inverse(), step):
            tri.apply_permutation(a, s, n)
            ref.apply_permutation(b, s, n)
        errs[label] = _diff(a, b)
    out, want = torch.zeros_like(psi), psi.clone()
    tri.permute_into(out, psi, step)
    ref.apply_permutation(want, step, n)
    errs["gather"] = _diff(out, want)
    from qhybrid.sim.steps import Layer

    q, _ = np.linalg.qr(rng.normal(size=(2, 2, 2)) + 1j * rng.normal(size=(2, 2, 2)))
    layer = Layer((0, n - 1), torch.tensor(q[:, None], dtype=dt, device=dev))
    after = _ladder(short, n, dt, dev)
    src, dst, want = psi.clone(), torch.empty_like(psi), psi.clone()
    got = tri.apply_layer(dst, layer, n, perm=step, src=src, after=after)
    ref.apply_permutation(want, step, n)
    ref.apply_layer(want, layer, n)
    ref.apply_permutation(want, after, n)
    errs["layer through ladders"] = _diff(got, want)
    return errs


def _paulis(tri, ref, n, dt, dev, rng) -> dict:
    psi = _state(rng, n, dt, dev)
    top = 1 << (n - 1)
    words = [(top, 0), (top | 1, 0b101), ((1 << n) - 1, 0b1010 & ((1 << n) - 1))]
    errs = {"pauli expval": max(_diff(tri.pauli_expval(psi, x, z), ref.pauli_expval(psi, x, z)) for x, z in words)}
    terms = [(0.4 - 0.2j, x, z) for x, z in words] + [(1.5, 0, 0b11)]
    a, b = psi.clone(), psi.clone()
    tri.pauli_sum_into(a, psi, terms)
    ref.pauli_sum_into(b, psi, terms)
    errs["pauli sum"] = _diff(a, b)
    return errs


def _engine(tri, ref, n, dev, rng) -> float:
    """A layered circuit with CNOT rings through ``sim.simulate`` with a cache, triton vs torch set."""
    from qhybrid.sim import Cache, Circuit, Operation
    from qhybrid.sim.simulate import final_state

    ops = []
    for shift in (1, 2):
        ops += [Operation("RY", (w,), (float(rng.uniform(-3, 3)),)) for w in range(n)]
        ops += [Operation("CNOT", (w, (w + shift) % n)) for w in range(n)]
    ops += [Operation("RX", (w,), (float(rng.uniform(-3, 3)),)) for w in range(0, n, 2)]
    circuit = Circuit(n, tuple(ops))
    return _diff(final_state(circuit, cache=Cache(), kernels=tri, device=dev),
                 final_state(circuit, kernels=ref, device=dev))


def check_index(ctx, tiles) -> list[str]:
    """The index moves and bit-flip Pauli words on the Triton set vs the torch set."""
    from qhybrid.sim.kernels import get_kernel_set

    tri, ref = type(get_kernel_set("triton"))(tiles=tiles), get_kernel_set("torch")
    n = ctx.sizes(16, 11)  # 11: two ten-bit digits of the gather's index, still tiny for the interpreter
    rng = np.random.default_rng(11)
    failures = []
    for dt in ctx.dtypes:
        tol = 1e-10 if dt == torch.complex128 else 1e-5
        errs = {**_moves(tri, ref, n, dt, ctx.device, rng), **_paulis(tri, ref, n, dt, ctx.device, rng)}
        failures += [f"{k} n={n} {dt}: triton vs torch set max |diff| {e:.1e}" for k, e in errs.items()
                     if not e <= tol]
    e = _engine(tri, ref, ctx.sizes(12, 6), ctx.device, rng)
    if not e <= 1e-10:
        failures.append(f"forward through ladders (complex128): triton vs torch set max |diff| {e:.1e}")
    return failures


def passes(ops, tiles, x, n):
    """``(label, states moved, fn)`` of the index passes on ``x`` ``(1, 2**n)``: a CNOT or SWAP moves
    half the state (read and written), the gather reads one state and writes another, a Pauli
    word reads the state (each amplitude twice: ``c`` and ``c ^ x``, counted once), a sum of two
    words reads ``out`` and the state twice and writes ``out``."""
    from qhybrid.sim.kernels import get_kernel_set

    tri = type(get_kernel_set("triton"))(tiles=tiles)
    ring = tuple(((w, (w + 1) % n), True) for w in range(n))
    step = _ladder(ring, n, x.dtype, x.device)
    y = torch.empty_like(x)
    top, flips = 1 << (n - 1), (1 << n) - 1
    terms = [(0.5, top, 0b11), (0.5j, flips, 1)]
    tri.permute_into(y, x, step)  # the tables on the device before the timing
    return [
        ("CNOT (control 0, target n-1)", 1, lambda: tri.apply_swap(x, (0, n - 1), True, n)),
        ("SWAP (wires 0, n-1)", 1, lambda: tri.apply_swap(x, (0, n - 1), False, n)),
        (f"CNOT ring of {n}: one gather", 2, lambda: tri.permute_into(y, x, step)),
        ("Pauli word with bit flips <X..Y..Z>", 1, lambda: tri.pauli_expval(x, flips, 0b101)),
        ("sum of 2 Pauli words into out", 4, lambda: tri.pauli_sum_into(y, x, terms)),
    ]
