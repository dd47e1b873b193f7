"""Launchers of the QML layer's Triton kernels (:mod:`.qml_kernels`) on complex ``(B, 2**n)`` states.

The layer's circuit (:mod:`qhybrid.qml.adjoint`) is a product state followed by 2x2 gates, each
uncontrolled or with one control. :func:`runs` cuts the gate list into runs of consecutive gates
on distinct targets (at most ``tiles.pass_bits``), each one pass of :func:`apply_gates` forward and
one two-state pass of :func:`adjoint_gates` back: the 26-wire classifier's 78 gates (its first
rotations are folded into the product state) are 9 passes each way. :func:`product_state` writes the product state
in one pass, :func:`factor_sums` reduces lambda for the factor gradients in one. They trust their
inputs (the kernel set's methods check nothing either: the layer validated the circuit).
"""
from __future__ import annotations

import torch

from . import qml_kernels as Q
from .ops import DEFAULT, Tiles, _gates, _pos, _view, triton_cdiv
from .passes import runs

#: programs per sample of :func:`factor_sums` (each loops over its rows: its ``t`` partial is one row of this)
FACTOR_PROGRAMS = 64


def _launch(x, y, gates, mats, n: int, tiles: Tiles):
    """One :func:`~.qml_kernels.gates_kernel` pass; the adjoint's partial sums ``(B, tiles, G, 8)`` or None."""
    xf, B, N, PS, ZS = _view(x)
    G = len(gates)
    pos, srt = _pos([n - 1 - t for _, t in gates], xf.device)
    ctrl = torch.tensor([n - 1 - c if c >= 0 else -1 for c, _ in gates], dtype=torch.int32, device=xf.device)
    mat, mat_bstride = _gates(mats, xf.dtype)
    rows = N >> G
    block_r = max(1, min(rows, tiles.tile >> G))
    grid = (triton_cdiv(rows, block_r), B)
    part = torch.empty((B, grid[0], G, 8), dtype=torch.float64, device=xf.device) if y is not None else xf
    Q.gates_kernel[grid](xf, xf if y is None else _view(y)[0], N, PS, pos, srt, ctrl, mat, mat_bstride, part,
                         grid[0], G=G, BLOCK_R=block_r, ADJOINT=y is not None, ZS=ZS, num_warps=tiles.warps)
    return part if y is not None else None


def _per_row(mats: torch.Tensor) -> torch.Tensor:
    """The layer's ``(G, 2, 2)`` or ``(G, B, 2, 2)`` matrices as the launchers' ``(Bm, G, 2, 2)``."""
    return mats[None] if mats.ndim == 3 else mats.transpose(0, 1)


def apply_gates(x: torch.Tensor, gates, mats: torch.Tensor, n: int, *, tiles: Tiles = DEFAULT) -> None:
    """``x <- U_G ... U_1 x`` in :func:`runs` passes: ``gates`` ``(control, target)`` wires (control
    -1: none), ``mats`` ``(G, 2, 2)`` or ``(G, B, 2, 2)`` complex."""
    m = _per_row(mats.detach())
    for lo, hi in runs(gates, tiles.pass_bits):
        _launch(x, None, gates[lo:hi], m[:, lo:hi], n, tiles)


def adjoint_gates(psi: torch.Tensor, lam: torch.Tensor, gates, mats: torch.Tensor, n: int, *,
                  tiles: Tiles = DEFAULT) -> torch.Tensor:
    """Every gate undone from the last on ``psi`` and ``lam`` (in place); returns ``(B, G, 2, 2)``
    complex128 ``sum lam_a conj(psi_c)`` per gate (``lam`` after, ``psi`` before it), as
    :func:`qhybrid.sim.batchedtorch.sweep`."""
    m = _per_row(mats.detach())
    inv = m.conj().transpose(-1, -2)
    out = torch.empty((psi.shape[0], len(gates), 2, 2), dtype=torch.complex128, device=psi.device)
    for lo, hi in reversed(runs(gates, tiles.pass_bits)):
        part = _launch(psi, lam, gates[lo:hi], inv[:, lo:hi], n, tiles).sum(dim=1)
        out[:, lo:hi] = torch.complex(part[..., 0::2], part[..., 1::2]).view(-1, hi - lo, 2, 2)
    return out


def _factor_launch(x, factors, *, product: bool, tiles: Tiles):
    xf, B, N, PS, ZS = _view(x)
    nw = factors.shape[1]
    low = min(nw, tiles.pass_bits)
    rows = N >> low
    block_r = max(1, min(rows, tiles.tile >> low))
    programs = min(FACTOR_PROGRAMS, triton_cdiv(rows, block_r))
    steps = triton_cdiv(triton_cdiv(rows, block_r), programs)
    f = torch.stack([factors.real, factors.imag], dim=1).to(torch.float64).contiguous()
    s = t = xf
    if not product:
        s = torch.empty((B, rows, 2), dtype=torch.float64, device=xf.device)
        t = torch.empty((B, programs, 1 << low, 2), dtype=torch.float64, device=xf.device)
    Q.factor_kernel[(programs, B)](xf, N, PS, f, nw, s, t, rows, steps, L=low, BLOCK_R=block_r,
                                   PRODUCT=product, ZS=ZS, num_warps=tiles.warps)
    return s, t


def product_state(x: torch.Tensor, factors: torch.Tensor, *, tiles: Tiles = DEFAULT) -> None:
    """``x[b] <- factors[b, 0] (x) ... (x) factors[b, n-1]`` (``factors`` ``(B, n, 2)`` complex), one pass."""
    _factor_launch(x, factors.detach(), product=True, tiles=tiles)


def factor_sums(lam: torch.Tensor, factors: torch.Tensor, *, tiles: Tiles = DEFAULT):
    """``(s, t, high)``: ``lam`` reduced in one pass to ``s`` ``(B, 2**high)`` (over the low wires,
    against their conjugate factors) and ``t`` ``(B, 2**(n - high))`` (over the high wires), complex128;
    the factor gradients of wires ``< high`` are those of ``s``, of the others those of ``t``."""
    s, t = _factor_launch(lam, factors.detach(), product=False, tiles=tiles)
    t = t.sum(dim=1)
    high = factors.shape[1] - min(factors.shape[1], tiles.pass_bits)
    return torch.complex(s[..., 0], s[..., 1]), torch.complex(t[..., 0], t[..., 1]), high
