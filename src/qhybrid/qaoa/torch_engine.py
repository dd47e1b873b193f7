"""QAOA energy and adjoint gradient in plain torch: the reference, on CPU or CUDA.

The circuit is PennyLane's: ``H^{\\otimes n}|0>``, then for each layer
``exp(-i gamma_l C)`` and ``exp(-i beta_l sum_i X_i)`` (RX(2 beta) on every
wire), measured with ``<C>``. The mixer is applied as ``W D W / 2**n`` with
``W`` the unnormalised Walsh–Hadamard transform and
``D(z) = exp(-i beta (n - 2 popcount z))``; see ``ADJOINT.md`` for the
gradient. States are ``(B, 2**n)``: one row per parameter set.

These functions trust their inputs (validated by :class:`~qhybrid.qaoa.QAOA`).
"""
from __future__ import annotations

import torch

from qhybrid.qaoa.problem import CostDiagonal

_REAL = {torch.complex64: torch.float32, torch.complex128: torch.float64}


def zsum(n: int, device) -> torch.Tensor:
    """``sum_i Z_i`` eigenvalues ``n - 2 popcount(z)`` as int8 ``(2**n,)`` (offset index: ``n - value``)."""
    acc = torch.full((2**n,), n, dtype=torch.int8, device=device)
    for i in range(n):
        acc.view(2**i, 2, 2 ** (n - i - 1))[:, 1] -= 2
    return acc


def _hadamard(k: int, dtype, device) -> torch.Tensor:
    h = torch.ones((1, 1), dtype=dtype, device=device)
    base = torch.tensor([[1.0, 1.0], [1.0, -1.0]], dtype=dtype, device=device)
    for _ in range(k):
        h = torch.kron(h, base)
    return h


def wht(state: torch.Tensor, n: int, *, group: int = 6) -> torch.Tensor:
    """Unnormalised Walsh–Hadamard transform over all ``n`` bits of each row; returns a new tensor.

    Applied as ``ceil(n / group)`` real matmuls with a ``2**k x 2**k`` Hadamard matrix.
    """
    batch = state.shape[0]
    x = torch.view_as_real(state)  # (B, N, 2)
    real = x.dtype
    lo = 0
    while lo < n:
        k = min(group, n - lo)
        h = _hadamard(k, real, state.device)
        x = torch.matmul(h, x.reshape(batch * 2 ** (n - lo - k), 2**k, 2 ** (lo + 1)))
        lo += k
    return torch.view_as_complex(x.reshape(batch, 2**n, 2).contiguous())


def cost_values(diag: CostDiagonal) -> torch.Tensor:
    """Dense float64 cost values (reference path)."""
    return diag.dense()


def _phase(diag_values: torch.Tensor, gamma: torch.Tensor, dtype) -> torch.Tensor:
    """exp(-i gamma_b C) as (B, N)."""
    ang = -gamma.to(torch.float64)[:, None] * diag_values[None, :]
    return torch.polar(torch.ones_like(ang), ang).to(dtype)


def _mixer_diag(zs: torch.Tensor, beta: torch.Tensor, n: int, dtype) -> torch.Tensor:
    """D'(z) = exp(-i beta (n - 2 pop z)) / 2**n as (B, N)."""
    ang = -beta.to(torch.float64)[:, None] * zs[None, :].to(torch.float64)
    return torch.polar(torch.full_like(ang, 2.0**-n), ang).to(dtype)


def forward(diag: CostDiagonal, params: torch.Tensor, *, dtype=torch.complex128, zs=None) -> torch.Tensor:
    """Final states ``(B, 2**n)`` for parameter sets ``params`` of shape ``(B, 2, p)``."""
    n = diag.n
    c = cost_values(diag)
    zs = zsum(n, c.device) if zs is None else zs
    psi = torch.full((params.shape[0], 2**n), 2.0 ** (-n / 2), dtype=dtype, device=c.device)
    for layer in range(params.shape[2]):
        psi = psi * _phase(c, params[:, 0, layer], dtype)
        psi = wht(wht(psi, n) * _mixer_diag(zs, params[:, 1, layer], n, dtype), n)
    return psi


def energy(diag: CostDiagonal, params: torch.Tensor, *, dtype=torch.complex128) -> torch.Tensor:
    """``<C>`` per parameter set, float64 ``(B,)``."""
    psi = forward(diag, params, dtype=dtype)
    return (psi.abs().square().to(torch.float64) * cost_values(diag)).sum(dim=1)


def energy_and_grad(diag: CostDiagonal, params: torch.Tensor, *, dtype=torch.complex128):
    """``(<C> (B,), d<C>/dparams (B, 2, p))`` by one forward and one adjoint sweep."""
    n = diag.n
    c = cost_values(diag)
    zs = zsum(n, c.device)
    p = params.shape[2]
    psi = forward(diag, params, dtype=dtype, zs=zs)
    cd = c.to(_REAL[dtype])
    e = (psi.abs().square().to(torch.float64) * c).sum(dim=1)
    lam = psi * cd
    grad = torch.zeros(params.shape, dtype=torch.float64, device=c.device)
    zsr = zs.to(_REAL[dtype])
    for layer in reversed(range(p)):
        psi, lam = wht(psi, n), wht(lam, n)
        grad[:, 1, layer] = 2.0 * (lam.conj() * zsr * psi).sum(dim=1).imag.to(torch.float64) / 2.0**n
        dconj = _mixer_diag(zs, params[:, 1, layer], n, dtype).conj()
        psi, lam = wht(psi * dconj, n), wht(lam * dconj, n)
        grad[:, 0, layer] = 2.0 * (lam.conj() * cd * psi).sum(dim=1).imag.to(torch.float64)
        if layer:
            ph = _phase(c, params[:, 0, layer], dtype).conj()
            psi, lam = psi * ph, lam * ph
    return e, grad
