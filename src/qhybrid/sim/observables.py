"""Observables on batched states: expectation values and ``O|psi>``.

A Pauli word acts as a permutation plus a sign, never as a matrix:
``P|c> = i^{nY} (-1)^{popcount(c & zmask)} |c ^ xmask>`` (``zmask`` = Z and Y
wires, ``xmask`` = X and Y wires, wire w = bit ``n-1-w``). All the Z-only
terms of an observable are summed into one real diagonal, built once per
(coefficients, masks) and kept in the caller's cache, so their cost does not
grow with their number. Dense (Hermitian / Projector) terms use the generic
matrix kernel.

Public: ``expval(state, obs, n, *, cache=None, kernels=None) -> (B,)`` real,
``apply_observable(state, obs, n, *, cache=None, kernels=None) -> (B, 2**n)``; ``kernels`` the
kernel set (:mod:`qhybrid.sim.kernels`; None: the default for the state's device).
"""
from __future__ import annotations

import numpy as np
import torch

from .circuit import split_terms
from .jit import HAVE_NUMBA
from .kernels import KernelSet, as_kernel_set
from .kernels.torch_ops import apply_matrix


def _parity_t(x: torch.Tensor) -> torch.Tensor:
    for s in (32, 16, 8, 4, 2, 1):
        x = x ^ (x >> s)
    return x & 1


def z_diagonal(z_terms, n, *, device, cache=None) -> torch.Tensor:
    """Real (2**n,) diagonal of ``sum c (-1)^popcount(i & zmask)``, cached by its terms."""
    key = ("zdiag", n, str(device), tuple(z_terms))
    d = cache.get(key) if cache is not None else None
    if d is not None:
        return d
    if HAVE_NUMBA:  # built once per observable, kept in the cache: numba when it is there, whatever the set
        from .registry import kernel

        out = np.zeros(2**n)
        for c, z in z_terms:
            kernel("zdiag_accumulate", out.shape[0])(out, float(c), int(z))
        d = torch.from_numpy(out).to(device)
    else:
        ar = torch.arange(2**n, device=device)
        d = torch.zeros(2**n, dtype=torch.float64, device=device)
        for c, z in z_terms:
            d += c * (1 - 2 * _parity_t(ar & z)).to(torch.float64)
    if cache is not None:
        cache.put(key, d, d.numel() * 8)
    return d


def _ks(kernels, state) -> KernelSet:
    return kernels if isinstance(kernels, KernelSet) else as_kernel_set(kernels, state.device.type)


def expval(state: torch.Tensor, obs, n: int, *, cache=None, kernels=None) -> torch.Tensor:
    """``<psi|O|psi>`` per batch row, a (B,) float64 tensor."""
    ks = _ks(kernels, state)
    B = state.shape[0]
    out = torch.zeros(B, dtype=torch.float64)
    zt, other = split_terms(obs, n)
    if zt:
        out += ks.weighted_norm(state, z_diagonal(zt, n, device=state.device, cache=cache))
    for c, x, z in other:
        out += (c * ks.pauli_expval(state, x, z)).real
    for t in obs.dense:
        m = torch.as_tensor(t.matrix, dtype=state.dtype, device=state.device)
        mv = apply_matrix(state, m, list(t.wires), n)
        out += t.coeff * (state.conj() * mv).sum(1).real.to(torch.float64).cpu()
    return out


def apply_observable(state: torch.Tensor, obs, n: int, *, cache=None, kernels=None,
                     out: torch.Tensor | None = None) -> torch.Tensor:
    """``O|psi>`` (B, 2**n), written into ``out`` when given. Sums are applied once, term by term
    into one buffer; the Z-only part is one diagonal multiply."""
    ks = _ks(kernels, state)
    zt, other = split_terms(obs, n)
    if out is None:
        out = torch.empty_like(state) if zt else torch.zeros_like(state)
    elif not zt:
        out.zero_()
    if zt:
        ks.diag_mul_into(out, state, z_diagonal(zt, n, device=state.device, cache=cache))
    if other:
        ks.pauli_sum_into(out, state, other)
    for t in obs.dense:
        m = torch.as_tensor(t.matrix, dtype=state.dtype, device=state.device)
        out.add_(apply_matrix(state, m, list(t.wires), n), alpha=t.coeff)
    return out
