"""Launchers of the Triton kernels (:mod:`.kernels`) on planar states.

A state is a contiguous complex tensor ``(B, 2**m)`` (read in place as interleaved floats) or a
planar float tensor ``(B, 2, 2**m)`` (see :func:`planar`); every function here changes it in
place or reduces it. Positions are *index bits*
(``p = m - 1 - wire``). Tile sizes come from a :class:`Tiles` (the defaults suit a GPU;
``gpu_check.py`` falls back to smaller ones when a size fails to compile). The functions trust
their inputs: the kernel sets check wires and shapes once, above.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from . import kernels as K
from .passes import PASS_BITS


@dataclass(frozen=True)
class Tiles:
    """Tile sizes of the kernels.

    Attributes:
        pass_bits: at most this many bits (fused gates, butterflies) per pass.
        tile: amplitudes per program of a pass (``block_rows << bits``), a power of two.
        block: amplitudes per program of the elementwise and reduction kernels.
        dense_rows: rows (groups of ``2**K`` amplitudes) per program of a dense matrix.
        warps: ``num_warps`` of the tile kernels (a pass, the two-state pass, a QML gate run, the
            factor pass): compiled for sm_80 / sm_90, 4 warps keep part of a 4096-amplitude tile
            on the stack (0.5-15 KB a thread), 8 keep it in registers (``benchmarks/triton_compile.py``).
    """

    pass_bits: int = PASS_BITS
    tile: int = 4096
    block: int = 2048
    dense_rows: int = 128
    warps: int = 8


DEFAULT = Tiles()

_REAL = {torch.complex128: torch.float64, torch.complex64: torch.float32}


def planar(state: torch.Tensor) -> torch.Tensor:
    """``(B, 2**m)`` (or ``(2**m,)``) complex amplitudes as a new planar ``(B, 2, 2**m)`` float tensor."""
    s = state.reshape(-1, state.shape[-1])
    return torch.stack([s.real, s.imag], dim=1).contiguous()


def complex_of(x: torch.Tensor) -> torch.Tensor:
    """A planar ``(B, 2, N)`` state as a new complex ``(B, N)`` tensor."""
    return torch.complex(x[:, 0], x[:, 1])


def _view(x: torch.Tensor) -> tuple[torch.Tensor, int, int, int, int]:
    """``(floats, B, N, PS, ZS)``: the float tensor a kernel reads, rows, amplitudes per row, the
    imaginary part's offset from the real part and the stride between amplitudes."""
    if x.is_complex():
        x2 = x.reshape(-1, x.shape[-1])
        return torch.view_as_real(x2), x2.shape[0], x2.shape[1], 1, 2
    return x, x.shape[0], x.shape[2], x.shape[2], 1


def _pos(positions, device) -> tuple[torch.Tensor, torch.Tensor]:
    p = [int(q) for q in positions]
    return (torch.tensor(p or [0], dtype=torch.int32, device=device),
            torch.tensor(sorted(p) or [0], dtype=torch.int32, device=device))


def _gates(mats: torch.Tensor | None, real) -> tuple[torch.Tensor | None, int]:
    """``(Bm, G, 2, 2)`` complex gates as ``(Bm, 8G)`` floats (re, im of m00 m01 m10 m11)."""
    if mats is None:
        return None, 0
    flat = torch.view_as_real(mats.resolve_conj()).to(real).reshape(mats.shape[0], -1).contiguous()
    return flat, (flat.shape[1] if flat.shape[0] > 1 else 0)


def run_pass(x: torch.Tensor, positions, *, pre=None, post=None, lookup=None, direct=None,
             init: float | None = None, tiles: Tiles = DEFAULT) -> None:
    """One :func:`~.kernels.pass_kernel` pass over the bits ``positions`` (at most ``tiles.pass_bits``).

    Args:
        x: the planar state, changed in place.
        positions: the index bits of the tile, tile bit ``j`` = ``positions[j]``.
        pre, post: None, ``"butterfly"``, or gates ``(Bm, G, 2, 2)`` complex (gate ``j`` on ``positions[j]``).
        lookup: ``(index, shift, table)``: multiply by ``table[index[z] + shift]``, ``table`` complex
            ``(L,)`` or ``(B, L)``.
        direct: ``(values, gamma)``: multiply by ``exp(-i gamma values[z])`` (values float64).
        init: start from the constant ``init`` instead of reading the state.
        tiles: tile sizes.
    """
    x, B, N, PS, ZS = _view(x)
    G = len(positions)
    real = x.dtype
    pos, srt = _pos(positions, x.device)
    modes, mats = [], []
    for stage in (pre, post):
        if stage is None or isinstance(stage, str):
            modes.append(K.NONE if stage is None else K.BUTTERFLY)
            mats.append(torch.zeros(1, 8 * max(G, 1), dtype=real, device=x.device))
        else:
            modes.append(K.GATES)
            mats.append(_gates(stage, real)[0])
    bm = max(m.shape[0] for m in mats)
    mat = torch.cat([m.expand(bm, -1) for m in mats], dim=1).contiguous()
    mat_bstride = mat.shape[1] if bm > 1 else 0
    scal = torch.tensor([0.0, 0.0 if init is None else float(init)], dtype=torch.float64, device=x.device)
    index, shift, lut, lut_len, lut_bstride, diag = srt, 0, x, 0, 0, K.NONE
    if lookup is not None:
        index, shift, table = lookup
        table = table.reshape(-1, table.shape[-1])
        lut = torch.stack([table.real, table.imag], dim=1).to(real).contiguous()
        lut_len, lut_bstride, diag = table.shape[-1], (2 * table.shape[-1] if table.shape[0] > 1 else 0), K.LOOKUP
    elif direct is not None:
        index, gamma = direct
        scal[0] = float(gamma)
        diag = K.DIRECT
    rows = N >> G
    block_r = max(1, min(rows, tiles.tile >> G))
    grid = (triton_cdiv(rows, block_r), B)
    K.pass_kernel[grid](x, N, PS, pos, srt, mat, mat_bstride, index, shift, lut, lut_len, lut_bstride, scal,
                        G=G, BLOCK_R=block_r, PRE=modes[0], DIAG=diag, POST=modes[1], INIT=init is not None,
                        ZS=ZS, num_warps=tiles.warps)


def triton_cdiv(a: int, b: int) -> int:
    """``ceil(a / b)``."""
    return -(-a // b)


def groups(positions, size: int) -> list[list[int]]:
    """``positions`` cut into consecutive groups of at most ``size``."""
    p = list(positions)
    return [p[i:i + size] for i in range(0, len(p), size)]


def apply_layer(x: torch.Tensor, positions, mats: torch.Tensor, *, tiles: Tiles = DEFAULT) -> None:
    """1-qubit gates ``mats`` (``(Bm, G, 2, 2)`` complex, gate ``j`` on bit ``positions[j]``, distinct
    bits) in ``ceil(G / tiles.pass_bits)`` passes."""
    for lo in range(0, len(positions), tiles.pass_bits):
        hi = lo + tiles.pass_bits
        run_pass(x, positions[lo:hi], pre=mats[:, lo:hi], tiles=tiles)


def walsh(x: torch.Tensor, positions, *, tiles: Tiles = DEFAULT) -> None:
    """Unnormalised Walsh-Hadamard butterflies on the bits ``positions``."""
    for group in groups(positions, tiles.pass_bits):
        run_pass(x, group, pre="butterfly", tiles=tiles)


def apply_dense(x: torch.Tensor, matrix: torch.Tensor, targets, controls=(), *, tiles: Tiles = DEFAULT) -> None:
    """A dense ``(Bm, D, D)`` complex matrix on the target bits (first = most significant of the
    matrix index), where every control bit is 1."""
    x, B, N, PS, ZS = _view(x)
    k = len(targets)
    d = 2**k
    m = matrix.reshape(-1, d, d)
    mp = torch.stack([m.real, m.imag], dim=1).to(x.dtype).contiguous()
    tpos, _ = _pos(targets, x.device)
    fixed = sorted([*targets, *controls])
    srt = torch.tensor(fixed, dtype=torch.int32, device=x.device)
    cmask = sum(1 << int(c) for c in controls)
    rows = N >> len(fixed)
    block_r = max(1, min(rows, tiles.dense_rows))
    grid = (triton_cdiv(rows, block_r), B)
    K.dense_kernel[grid](x, N, PS, tpos, srt, cmask, mp, 2 * d * d if mp.shape[0] > 1 else 0,
                         K=k, NF=len(fixed), BLOCK_R=block_r, ZS=ZS)


def apply_diagonal(x: torch.Tensor, diagonal: torch.Tensor, positions, *, tiles: Tiles = DEFAULT) -> None:
    """Multiply by a complex diagonal ``(Bm, 2**K)`` over the bits ``positions`` (first = most significant)."""
    x, B, N, PS, ZS = _view(x)
    d = diagonal.reshape(-1, diagonal.shape[-1])
    dp = torch.stack([d.real, d.imag], dim=1).to(x.dtype).contiguous()
    pos, _ = _pos(positions, x.device)
    block = min(N, tiles.block)
    K.diag_kernel[(triton_cdiv(N, block), B)](x, N, PS, pos, dp, dp.shape[2] * 2 if dp.shape[0] > 1 else 0,
                                              K=len(positions), BLOCK=block, ZS=ZS)


@dataclass(frozen=True)
class Weights:
    """A real weight per amplitude: ``kind`` one of ``"one"``, ``"values"`` (``w[z]``),
    ``"lookup"`` (``w[index[z] + shift]``), ``"pauliz"`` (``sum_t w[t] (-1)**popcount(z & index[t])``,
    ``shift`` = the number of terms)."""

    kind: str = "one"
    w: torch.Tensor | None = None
    index: torch.Tensor | None = None
    shift: int = 0

    @classmethod
    def pauli_z(cls, coeffs, masks, device) -> "Weights":
        """``sum_t coeffs[t] Z-string(masks[t])`` (a mask's bits: the Z factors' index bits)."""
        return cls("pauliz", torch.tensor(list(coeffs), dtype=torch.float64, device=device),
                   torch.tensor(list(masks), dtype=torch.int64, device=device), len(list(masks)))

    def args(self, x):
        mode = {"one": K.W_ONE, "values": K.W_VALUES, "lookup": K.W_LOOKUP, "pauliz": K.W_PAULIZ}[self.kind]
        w = self.w if self.w is not None else x
        index = self.index if self.index is not None else x
        return w, index, self.shift, mode


def _reduce(a, b, weights: Weights, tiles: Tiles) -> torch.Tensor:
    a, B, N, PS, ZS = _view(a)
    b = None if b is None else _view(b)[0]
    block = min(N, tiles.block)
    tiles_n = triton_cdiv(N, block)
    out = torch.empty((B, tiles_n, 2), dtype=torch.float64, device=a.device)
    w, index, shift, mode = weights.args(a)
    K.reduce_kernel[(tiles_n, B)](a, a if b is None else b, N, PS, w, index, shift, out, tiles_n, W=mode,
                                  INNER=b is not None, BLOCK=block, ZS=ZS)
    return out.sum(dim=1)


def expect(x: torch.Tensor, weights: Weights = Weights(), *, tiles: Tiles = DEFAULT) -> torch.Tensor:
    """``sum_z w[z] |x[z]|^2`` per batch row, float64 ``(B,)``."""
    return _reduce(x, None, weights, tiles)[:, 0]


def inner(a: torch.Tensor, b: torch.Tensor, weights: Weights = Weights(), *, tiles: Tiles = DEFAULT) -> torch.Tensor:
    """``sum_z w[z] conj(a[z]) b[z]`` per batch row, complex128 ``(B,)``."""
    s = _reduce(a, b, weights, tiles)
    return torch.complex(s[:, 0], s[:, 1])


def scale(x: torch.Tensor, weights: Weights, out: torch.Tensor, *, tiles: Tiles = DEFAULT) -> None:
    """``out = w * x`` (``out`` another buffer of ``x``'s shape and layout)."""
    x, B, N, PS, ZS = _view(x)
    out = _view(out)[0]
    block = min(N, tiles.block)
    w, index, shift, mode = weights.args(x)
    K.scale_kernel[(triton_cdiv(N, block), B)](x, out, N, PS, w, index, shift, W=mode, BLOCK=block, ZS=ZS)


def pair_pass(x: torch.Tensor, y: torch.Tensor | None, positions, *, pre=None, post=None, lookup=None,
              direct=None, reduce: str | None = None, weights: Weights = Weights(), make_y: bool = False,
              store: bool = True, tiles: Tiles = DEFAULT) -> torch.Tensor | None:
    """One :func:`~.pair_kernels.pair_kernel` pass on ``x`` (psi) and ``y`` (lambda, or None) over the
    bits ``positions``: ``pre`` butterflies (``"butterfly"`` or None), the reduction ``reduce``
    (``"inner"``: ``sum w conj(y) x``; ``"norm"``: ``sum w |x|^2``, and ``y = w x`` made there when
    ``make_y``), the diagonal (``lookup`` ``(index, shift, table)`` with one table row, or ``direct``
    as :func:`run_pass`), ``post`` butterflies; both stored unless ``store`` is False.

    Returns:
        The reduction per row, complex128 ``(B,)``, or None.
    """
    from . import pair_kernels as PK

    x, B, N, PS, ZS = _view(x)
    yv = _view(y)[0] if y is not None else x
    G = len(positions)
    pos, srt = _pos(positions, x.device)
    scal = torch.zeros(1, dtype=torch.float64, device=x.device)
    index, shift, lut, lut_len, diag = srt, 0, x, 0, K.NONE
    if lookup is not None:
        index, shift, table = lookup
        table = table.reshape(-1)
        lut = torch.stack([table.real, table.imag]).to(x.dtype).contiguous()
        lut_len, diag = table.shape[0], K.LOOKUP
    elif direct is not None:
        index, gamma = direct
        scal[0] = float(gamma)
        diag = K.DIRECT
    rows = N >> G
    block_r = max(1, min(rows, tiles.tile >> G))
    grid = (triton_cdiv(rows, block_r), B)
    red = {None: 0, "inner": 1, "norm": 2}[reduce]
    part = torch.empty((B, grid[0], 2), dtype=torch.float64, device=x.device) if red else scal
    w, w_index, w_shift, w_mode = weights.args(x)
    PK.pair_kernel[grid](x, yv, N, PS, pos, srt, index, shift, lut, lut_len, scal, w, w_index, w_shift, part,
                         grid[0], G=G, BLOCK_R=block_r, PRE=K.BUTTERFLY if pre else K.NONE, DIAG=diag,
                         POST=K.BUTTERFLY if post else K.NONE, Y=2 if make_y else (1 if y is not None else 0),
                         RED=red, W=w_mode, STORE=store, ZS=ZS, num_warps=tiles.warps)
    if not red:
        return None
    s = part.sum(dim=1)
    return torch.complex(s[:, 0], s[:, 1])
