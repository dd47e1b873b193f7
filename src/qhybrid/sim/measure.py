"""Measurements on a final batched state: expval, var, probs, state, samples.

``measure(state, m, n, *, cache=None, kernels=None)`` returns a tensor with a
leading batch axis ``B``: ``(B,)`` for expval/var, ``(B, 2**k)`` for probs,
``(B, 2**n)`` for state. ``sample_bits(state, shots, n, *, rng)`` draws basis
states with an explicit numpy ``Generator`` (or seed) and returns
``(B, shots, n)`` bits, wire 0 first.
"""
from __future__ import annotations

import numpy as np
import torch

from . import observables


def probs(state: torch.Tensor, wires, n: int) -> torch.Tensor:
    """Marginal probabilities of ``wires`` (in that order), (B, 2**k) float."""
    B = state.shape[0]
    p = (state.real**2 + state.imag**2).reshape((B,) + (2,) * n)
    wires = list(wires)
    if not wires:
        return p.reshape(B, -1).sum(1, keepdim=True)
    rest = [1 + w for w in range(n) if w not in wires]
    if rest:
        p = p.sum(dim=rest)
    kept = sorted(wires)
    perm = [0] + [1 + kept.index(w) for w in wires]
    return p.permute(perm).reshape(B, -1)


def var(state: torch.Tensor, obs, n: int, *, cache=None, kernels=None) -> torch.Tensor:
    """``<O^2> - <O>^2`` per row, with ``O|psi>`` computed once."""
    ev = observables.expval(state, obs, n, cache=cache, kernels=kernels)
    opsi = observables.apply_observable(state, obs, n, cache=cache, kernels=kernels)
    sq = (opsi.real**2 + opsi.imag**2).sum(1).to(torch.float64).cpu()
    return sq - ev**2


def measure(state: torch.Tensor, m, n: int, *, cache=None, kernels=None) -> torch.Tensor:
    """One :class:`~qhybrid.sim.circuit.Measurement` on ``state``."""
    if m.kind == "expval":
        return observables.expval(state, m.obs, n, cache=cache, kernels=kernels)
    if m.kind == "var":
        return var(state, m.obs, n, cache=cache, kernels=kernels)
    if m.kind == "probs":
        return probs(state, m.wires if m.wires else range(n), n)
    if m.kind == "state":
        return state.clone()
    raise ValueError(f"unknown measurement kind {m.kind!r}; valid: expval, var, probs, state")


def sample_bits(state: torch.Tensor, shots: int, n: int, *, rng=None) -> np.ndarray:
    """``shots`` basis states per batch row as bits, (B, shots, n) int64."""
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    p = (state.real**2 + state.imag**2).to(torch.float64).cpu().numpy()
    out = np.empty((p.shape[0], shots, n), dtype=np.int64)
    shifts = np.arange(n - 1, -1, -1)
    for b in range(p.shape[0]):
        pb = p[b] / p[b].sum()
        idx = rng.choice(pb.shape[0], size=shots, p=pb)
        out[b] = (idx[:, None] >> shifts) & 1
    return out
