"""Launchers of the index-map kernels (:mod:`.index_kernels`) on complex ``(B, 2**n)`` states.

CNOT and SWAP (:func:`swap`: in place, half the state read and written), a CNOT / SWAP ladder
as one gather (:func:`gather`: into another buffer), a Pauli word with bit flips
(:func:`pauli_expval`: one read) and a sum of them applied to a state (:func:`pauli_sum`: one
pass over ``out``, every word read from the state in it). Positions are index bits
(``p = n - 1 - wire``). They trust their inputs: the kernel set checks nothing either.
"""
from __future__ import annotations

import torch

from . import index_kernels as X
from .ops import DEFAULT, Tiles, _view, triton_cdiv


def swap(x: torch.Tensor, bits, ctrl: bool, *, tiles: Tiles = DEFAULT) -> None:
    """A CNOT (``ctrl``: control index bit ``bits[0]``, target ``bits[1]``) or a SWAP of the
    index bits ``bits``, in place."""
    xf, B, N, PS, ZS = _view(x)
    a, b = (int(p) for p in bits)
    lo, hi = min(a, b), max(a, b)
    if ctrl:
        p_bits, q_bits = 1 << a, (1 << a) | (1 << b)
    else:
        p_bits, q_bits = 1 << a, 1 << b
    quarter = N >> 2
    block = max(1, min(quarter, tiles.block))
    X.swap_kernel[(triton_cdiv(quarter, block), B)](xf, N, PS, (1 << lo) - 1, (1 << hi) - 1, p_bits, q_bits,
                                                    BLOCK=block, ZS=ZS)


def digits(n: int) -> int:
    """Ten-bit digits of a ``2**n`` index (at least one)."""
    return max(1, triton_cdiv(n, X.DIGIT_BITS))


def gather(out: torch.Tensor, x: torch.Tensor, tables: torch.Tensor, *, tiles: Tiles = DEFAULT) -> None:
    """``out[b, j] = x[b, h(j)]``: ``tables`` the int64 ``(4, 1024)`` digit tables of ``h`` on the
    state's device (:func:`qhybrid.sim.bind.ladder_tables`, one row); ``out`` another buffer of
    ``x``'s shape and layout."""
    xf, B, N, PS, ZS = _view(x)
    of = _view(out)[0]
    block = min(N, tiles.block)
    X.gather_kernel[(triton_cdiv(N, block), B)](xf, of, N, PS, tables, DIGITS=digits(N.bit_length() - 1),
                                                BLOCK=block, ZS=ZS)


def pauli_expval(x: torch.Tensor, x_bits: int, z_bits: int, *, tiles: Tiles = DEFAULT) -> torch.Tensor:
    """``sum_c conj(x[c]) (-1)^{popcount((c ^ x_bits) & z_bits)} x[c ^ x_bits]`` per row, complex128 ``(B,)``."""
    xf, B, N, PS, ZS = _view(x)
    block = min(N, tiles.block)
    n_tiles = triton_cdiv(N, block)
    part = torch.empty((B, n_tiles, 2), dtype=torch.float64, device=xf.device)
    X.pauli_reduce_kernel[(n_tiles, B)](xf, N, PS, int(x_bits), int(z_bits), part, n_tiles, BLOCK=block, ZS=ZS)
    s = part.sum(dim=1)
    return torch.complex(s[:, 0], s[:, 1])


def pauli_sum(out: torch.Tensor, x: torch.Tensor, terms, *, tiles: Tiles = DEFAULT) -> None:
    """``out += sum_t c_t P_t x``: ``terms`` ``[(c, x_bits, z_bits), ...]`` (``c`` complex), one pass."""
    if not terms:
        return
    xf, B, N, PS, ZS = _view(x)
    of = _view(out)[0]
    coef = torch.tensor([[complex(c).real, complex(c).imag] for c, _, _ in terms], dtype=xf.dtype,
                        device=xf.device)
    xs = torch.tensor([int(t[1]) for t in terms], dtype=torch.int64, device=xf.device)
    zs = torch.tensor([int(t[2]) for t in terms], dtype=torch.int64, device=xf.device)
    block = min(N, tiles.block)
    X.pauli_sum_kernel[(triton_cdiv(N, block), B)](xf, of, N, PS, coef, xs, zs, len(terms), BLOCK=block, ZS=ZS)
