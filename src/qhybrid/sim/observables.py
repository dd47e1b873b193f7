"""Observables on batched states: expectation values and ``O|psi>``.

A Pauli word acts as a permutation plus a sign, never as a matrix:
``P|c> = i^{nY} (-1)^{popcount(c & zmask)} |c ^ xmask>`` (``zmask`` = Z and Y
wires, ``xmask`` = X and Y wires, wire w = bit ``n-1-w``). All the Z-only
terms of an observable are summed into one real diagonal, built once per
(coefficients, masks) and kept in the caller's cache, so their cost does not
grow with their number. Dense (Hermitian / Projector) terms use the generic
matrix kernel.

Public: ``expval(state, obs, n, *, cache=None, fast=True) -> (B,)`` real,
``apply_observable(state, obs, n, *, cache=None, fast=True) -> (B, 2**n)``.
"""
from __future__ import annotations

import numpy as np
import torch

from . import kernels
from .apply import use_fast

try:
    from . import fastkernels as numba_kernels
    from .fastobs import sort_pauli_terms
except Exception:  # pragma: no cover
    numba_kernels = None

#: Output chunk (amplitudes) of the many-word kernel: it and its sources stay in L1/L2.
PAULI_CHUNK = 128


def _masks(word, n):
    x = z = ny = 0
    for w, p in word:
        bit = 1 << (n - 1 - w)
        if p in ("X", "Y"):
            x |= bit
        if p in ("Z", "Y"):
            z |= bit
        ny += p == "Y"
    return x, z, ny


def _parity_t(x: torch.Tensor) -> torch.Tensor:
    for s in (32, 16, 8, 4, 2, 1):
        x = x ^ (x >> s)
    return x & 1


def split_terms(obs, n):
    """(z_terms [(coeff, zmask)], other [(coeff * i^nY, xmask, zmask)]) of the Pauli part."""
    zt, other = [], []
    for t in obs.paulis:
        x, z, ny = _masks(t.word, n)
        c = complex(t.coeff) * (1j**ny)
        if x == 0:
            zt.append((c.real, z))
        else:
            other.append((c, x, z))
    return zt, other


def z_diagonal(z_terms, n, *, device, cache=None) -> torch.Tensor:
    """Real (2**n,) diagonal of ``sum c (-1)^popcount(i & zmask)``, cached by its terms."""
    key = ("zdiag", n, str(device), tuple(z_terms))
    d = cache.get(key) if cache is not None else None
    if d is not None:
        return d
    if numba_kernels is not None:
        out = np.zeros(2**n)
        for c, z in z_terms:
            numba_kernels.kernel("zdiag_accumulate", out.shape[0])(out, float(c), int(z))
        d = torch.from_numpy(out).to(device)
    else:
        ar = torch.arange(2**n, device=device)
        d = torch.zeros(2**n, dtype=torch.float64, device=device)
        for c, z in z_terms:
            d += c * (1 - 2 * _parity_t(ar & z)).to(torch.float64)
    if cache is not None:
        cache.put(key, d, d.numel() * 8)
    return d


def _pauli_apply_t(state, x, z):
    ar = torch.arange(state.shape[1], device=state.device)
    src = ar ^ x
    sign = (1 - 2 * _parity_t(src & z)).to(state.real.dtype)
    return state[:, src] * sign


def expval(state: torch.Tensor, obs, n: int, *, cache=None, fast: bool = True) -> torch.Tensor:
    """``<psi|O|psi>`` per batch row, a (B,) float64 tensor."""
    B = state.shape[0]
    out = torch.zeros(B, dtype=torch.float64)
    zt, other = split_terms(obs, n)
    fastp = use_fast(state, fast)
    if zt:
        d = z_diagonal(zt, n, device=state.device, cache=cache)
        if fastp:
            out += torch.from_numpy(numba_kernels.kernel("weighted_norm", state.shape[1])(state.numpy(), d.numpy()))
        else:
            out += ((state.real**2 + state.imag**2) * d).sum(1).to(torch.float64).cpu()
    for c, x, z in other:
        if fastp:
            v = torch.from_numpy(numba_kernels.kernel("pauli_expval", state.shape[1])(state.numpy(), x, z))
        else:
            v = (state.conj() * _pauli_apply_t(state, x, z)).sum(1).to(torch.complex128).cpu()
        out += (c * v).real
    for t in obs.dense:
        m = torch.as_tensor(t.matrix, dtype=state.dtype, device=state.device)
        mv = kernels.apply_matrix(state, m, list(t.wires), n)
        out += t.coeff * (state.conj() * mv).sum(1).real.to(torch.float64).cpu()
    return out


def apply_observable(state: torch.Tensor, obs, n: int, *, cache=None, fast: bool = True,
                     out: torch.Tensor | None = None) -> torch.Tensor:
    """``O|psi>`` (B, 2**n), written into ``out`` when given. Sums are applied once, term by term
    into one buffer; the Z-only part is one diagonal multiply."""
    zt, other = split_terms(obs, n)
    if out is None:
        out = torch.empty_like(state) if zt else torch.zeros_like(state)
    elif not zt:
        out.zero_()
    fastp = use_fast(state, fast)
    if zt:
        d = z_diagonal(zt, n, device=state.device, cache=cache)
        if fastp:
            numba_kernels.kernel("diag_mul_into", state.shape[1])(out.numpy(), state.numpy(), d.numpy())
        else:
            out.copy_(state)
            out.mul_(d.to(state.real.dtype))
    if fastp and other:  # a complex coefficient as a real and an imaginary term (see the kernel)
        parts = [(v, k, x, z) for c, x, z in other for k, v in enumerate((c.real, c.imag)) if v != 0]
        cf = np.array([p[0] for p in parts], dtype=state.numpy().real.dtype)
        im = np.array([p[1] for p in parts], dtype=np.int64)
        xs = np.array([p[2] for p in parts], dtype=np.int64)
        zs = np.array([p[3] for p in parts], dtype=np.int64)
        L = min(state.shape[1], PAULI_CHUNK)
        order, gstart, gimag = sort_pauli_terms(xs, im, L)
        numba_kernels.kernel("pauli_sum_accumulate", state.shape[1])(
            out.numpy(), state.numpy(), np.ascontiguousarray(cf[order]), np.ascontiguousarray(xs[order]),
            np.ascontiguousarray(zs[order]), gstart, gimag, L)
    elif other:
        for c, x, z in other:
            out.add_(_pauli_apply_t(state, x, z), alpha=c)
    for t in obs.dense:
        m = torch.as_tensor(t.matrix, dtype=state.dtype, device=state.device)
        out.add_(kernels.apply_matrix(state, m, list(t.wires), n), alpha=t.coeff)
    return out
