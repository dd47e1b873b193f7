"""QAOA energy and adjoint gradient on the Triton kernels (:mod:`qhybrid.sim.triton`).

The same sweep as the torch reference (:mod:`.torch_engine`, method in ``ADJOINT.md``): the
mixer as ``W D' W`` (unnormalised Walsh-Hadamard transforms around a diagonal looked up from
``sum_i Z_i`` in the Hadamard basis), the cost phase looked up from the cost index, Max-Cut on
the half state with wire 0 = 0. Laid out in passes like the fused CPU sweep: a state's index
bits are cut into a *low* group (the ``pass_bits`` lowest) and high groups; one forward layer
is a low pass (finish the previous mixer's low butterflies, cost phase, start the next mixer's)
and one pass per high group (the last one doing butterflies, ``D'``, butterflies). The adjoint
un-applies both states (``psi`` and ``lambda = C psi``), reading the gradients with the
reduction kernels between passes (a layer's cost phase is undone inside the next transform's
first pass).

It trusts its inputs (:class:`~qhybrid.qaoa.QAOA` validates them).
"""
from __future__ import annotations

import numpy as np
import torch

from qhybrid.qaoa.problem import CostDiagonal
from qhybrid.qaoa.torch_engine import zsum
from qhybrid.sim.triton import ops
from qhybrid.sim.triton.ops import DEFAULT, Tiles, Weights

_DTYPES = {"complex128": torch.complex128, "complex64": torch.complex64,
           torch.complex128: torch.complex128, torch.complex64: torch.complex64}


def _tensor(a, device):
    return None if a is None else torch.as_tensor(a).to(device)


class TritonSweep:
    """One QAOA instance's sweep on the Triton kernels.

    Args:
        diagonal: the cost diagonal (numpy or torch arrays).
        symmetric: simulate the half with wire 0 = 0 (Max-Cut's bit-flip symmetry).
        dtype: ``"complex128"`` / ``"complex64"`` (or the torch dtype).
        device: where the states live (``"cuda"``; ``"cpu"`` under the interpreter).
        tiles: the kernels' tile sizes.
    """

    def __init__(self, diagonal: CostDiagonal, *, symmetric: bool, dtype="complex128", device="cuda",
                 tiles: Tiles = DEFAULT):
        self.n, self.dtype, self.tiles = diagonal.n, _DTYPES[dtype], tiles
        self.device = torch.device(device)
        self.symmetric = symmetric
        self.m = self.n - 1 if symmetric else self.n
        self.size = 2**self.m
        self.fold = 2.0 if symmetric else 1.0
        if diagonal.values is not None:
            self.values = _tensor(diagonal.values, self.device)[: self.size].to(torch.float64).contiguous()
            self.index = self.levels = None
            self.cost = Weights("values", w=self.values)
        else:
            self.index = _tensor(diagonal.index, self.device)[: self.size].contiguous()
            self.levels = _tensor(diagonal.levels, self.device).to(torch.float64).contiguous()
            self.values = None
            self.cost = Weights("lookup", w=self.levels, index=self.index)
        self.zs = zsum(self.n, self.device, symmetric=symmetric).contiguous()  # int8, -n..n
        self.zvals = torch.arange(-self.n, self.n + 1, dtype=torch.float64, device=self.device)
        self.zweights = Weights("lookup", w=self.zvals, index=self.zs, shift=self.n)
        bits = list(range(self.m))
        self.low = bits[: tiles.pass_bits]
        self.highs = ops.groups(bits[tiles.pass_bits:], tiles.pass_bits)
        self.psi = torch.empty((1, self.size), dtype=self.dtype, device=self.device)
        self.lam = torch.empty_like(self.psi)

    # -- diagonals as pass arguments -------------------------------------------------------
    def _phase(self, gamma: float, *, conj: bool = False) -> dict:
        g = -gamma if conj else gamma
        if self.values is not None:
            return {"direct": (self.values, g)}
        table = torch.polar(torch.ones_like(self.levels), -g * self.levels).to(self.dtype)
        return {"lookup": (self.index, 0, table)}

    def _mixer(self, beta: float, *, conj: bool = False) -> dict:
        b = -beta if conj else beta
        table = torch.polar(torch.full_like(self.zvals, 1.0 / self.size), -b * self.zvals).to(self.dtype)
        return {"lookup": (self.zs, self.n, table)}

    def _walsh_high(self, x, middle: dict | None) -> None:
        """The high groups' butterflies with ``middle`` (a diagonal) between the two halves:
        ``W_h1..W_hk [D] W_hk..W_h1``; with no high group, the diagonal alone."""
        t = self.tiles
        if not middle:
            for g in self.highs:
                ops.run_pass(x, g, pre="butterfly", tiles=t)
            return
        if not self.highs:
            ops.run_pass(x, [], tiles=t, **middle)
            return
        for g in self.highs[:-1]:
            ops.run_pass(x, g, pre="butterfly", tiles=t)
        ops.run_pass(x, self.highs[-1], pre="butterfly", post="butterfly", tiles=t, **middle)
        for g in reversed(self.highs[:-1]):
            ops.run_pass(x, g, pre="butterfly", tiles=t)

    def _forward(self, gam, bet) -> None:
        t, psi = self.tiles, self.psi
        for layer in range(len(gam)):
            first = layer == 0
            ops.run_pass(psi, self.low, pre=None if first else "butterfly", post="butterfly",
                         init=2.0 ** (-self.n / 2) if first else None, tiles=t, **self._phase(gam[layer]))
            self._walsh_high(psi, self._mixer(bet[layer]))
        ops.run_pass(psi, self.low, pre="butterfly", tiles=t)

    def _unapply_mixer(self, x, beta: float) -> None:
        """``x <- W D'^* W x`` given ``W x`` (the first W already applied): ``D'^*``, then ``W``."""
        t = self.tiles
        ops.run_pass(x, self.low, post="butterfly", tiles=t, **self._mixer(beta, conj=True))
        self._walsh_high(x, None)

    def _walsh(self, x, diagonal: dict | None = None) -> None:
        """``x <- W [D] x``: the low pass applies the diagonal ``D`` (a pass argument) first."""
        ops.run_pass(x, self.low, post="butterfly", tiles=self.tiles, **(diagonal or {}))
        self._walsh_high(x, None)

    def energy_one(self, gam, bet) -> float:
        """``<C>`` for one parameter set."""
        self._forward(gam, bet)
        return self.fold * float(ops.expect(self.psi, self.cost, tiles=self.tiles)[0])

    def energy_and_grad_one(self, gam, bet) -> tuple[float, np.ndarray]:
        """``(<C>, d<C>/d[gammas, betas] (2, p))`` by the forward sweep and the un-apply sweep."""
        t, psi, lam = self.tiles, self.psi, self.lam
        p = len(gam)
        self._forward(gam, bet)
        e = self.fold * float(ops.expect(psi, self.cost, tiles=t)[0])
        ops.scale(psi, self.cost, lam, tiles=t)
        g = np.zeros((2, p))
        undo = None  # the conj cost phase of the layer after this one, applied in the first pass
        for layer in reversed(range(p)):
            self._walsh(psi, undo)
            self._walsh(lam, undo)
            g[1, layer] = 2.0 * self.fold * float(ops.inner(lam, psi, self.zweights, tiles=t)[0].imag) / self.size
            self._unapply_mixer(psi, bet[layer])
            self._unapply_mixer(lam, bet[layer])
            g[0, layer] = 2.0 * self.fold * float(ops.inner(lam, psi, self.cost, tiles=t)[0].imag)
            undo = self._phase(gam[layer], conj=True)
        return e, g

    # -- the kernel set's QAOA engine interface -------------------------------------------
    def energy(self, arr) -> np.ndarray:
        """``<C>`` per row of ``arr`` ``(B, 2, p)`` = [gammas, betas], float64 ``(B,)``."""
        arr = np.asarray(arr, dtype=np.float64).reshape(-1, 2, np.shape(arr)[-1])
        return np.array([self.energy_one(a[0], a[1]) for a in arr])

    def energy_and_grad(self, arr) -> list[tuple[float, np.ndarray]]:
        """``[(<C>, gradient (2, p)), ...]``, one per row of ``arr``."""
        arr = np.asarray(arr, dtype=np.float64).reshape(-1, 2, np.shape(arr)[-1])
        return [self.energy_and_grad_one(a[0], a[1]) for a in arr]

    def state(self, arr) -> np.ndarray:
        """The full final state ``(2**n,)`` (numpy complex) of the first row of ``arr``."""
        a = np.asarray(arr, dtype=np.float64).reshape(-1, 2, np.shape(arr)[-1])[0]
        self._forward(a[0], a[1])
        psi = self.psi[0].cpu().numpy()
        return np.concatenate([psi, psi[::-1]]) if self.symmetric else psi.copy()

    def top(self, arr, k: int) -> list[tuple[float, int]]:
        """The ``k`` most likely basis states ``[(probability, index), ...]`` of the first row."""
        probs = np.abs(self.state(arr)) ** 2
        order = np.argsort(-probs, kind="stable")[:k]
        return [(float(probs[i]), int(i)) for i in order]
