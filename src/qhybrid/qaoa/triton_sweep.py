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
from qhybrid.sim.triton.passes import qaoa_traffic as traffic  # noqa: F401  (the count of these passes)

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

    def _forward(self, gam, bet, *, final: bool = True) -> None:
        """The layers on ``psi``; ``final``: the last mixer's low butterflies too (else left to the
        pass that reads the energy)."""
        t, psi = self.tiles, self.psi
        for layer in range(len(gam)):
            first = layer == 0
            ops.run_pass(psi, self.low, pre=None if first else "butterfly", post="butterfly",
                         init=2.0 ** (-self.n / 2) if first else None, tiles=t, **self._phase(gam[layer]))
            self._walsh_high(psi, self._mixer(bet[layer]))
        if final:
            ops.run_pass(psi, self.low, pre="butterfly", tiles=t)

    def energy_one(self, gam, bet) -> float:
        """``<C>`` for one parameter set: the last low butterflies and the energy in one read."""
        self._forward(gam, bet, final=False)
        e = ops.pair_pass(self.psi, None, self.low, pre="butterfly", reduce="norm", weights=self.cost,
                          store=False, tiles=self.tiles)
        return self.fold * float(e[0].real)

    def _pair_mixer(self, beta: float) -> float:
        """Un-apply a mixer's high part on both states (given ``W_low`` applied: ``W_high``, ``D'^*``,
        ``W_high``; the low butterflies are the next pass's) and return ``Im <lam| Z |psi>`` read
        in the Hadamard basis, between ``W`` and ``D'^*``."""
        t, pair = self.tiles, (self.psi, self.lam)
        mixer = self._mixer(beta, conj=True)
        for g in self.highs[:-1]:
            ops.pair_pass(*pair, g, pre="butterfly", tiles=t)
        last = self.highs[-1] if self.highs else []
        fly = "butterfly" if self.highs else None
        s = ops.pair_pass(*pair, last, pre=fly, post=fly, reduce="inner", weights=self.zweights, tiles=t, **mixer)
        for g in reversed(self.highs[:-1]):
            ops.pair_pass(*pair, g, pre="butterfly", tiles=t)
        return float(s[0].imag)

    def energy_and_grad_one(self, gam, bet) -> tuple[float, np.ndarray]:
        """``(<C>, d<C>/d[gammas, betas] (2, p))``: the forward sweep, one pass that reads the
        energy and makes ``lambda = C psi``, then per layer (last first) the mixer's high passes
        and one low pass on both states at once, each gradient's inner product read inside them
        (:func:`traffic` counts the bytes)."""
        t, psi, lam = self.tiles, self.psi, self.lam
        p = len(gam)
        self._forward(gam, bet, final=False)
        e = ops.pair_pass(psi, lam, self.low, pre="butterfly", post="butterfly", reduce="norm",
                          weights=self.cost, make_y=True, tiles=t)
        g = np.zeros((2, p))
        for layer in reversed(range(p)):
            g[1, layer] = 2.0 * self.fold * self._pair_mixer(bet[layer]) / self.size
            last = layer == 0  # after layer 0's gamma sum nothing is needed: read only
            undo = {} if last else self._phase(gam[layer], conj=True)
            s = ops.pair_pass(psi, lam, self.low, pre="butterfly", post=None if last else "butterfly",
                              reduce="inner", weights=self.cost, store=not last, tiles=t, **undo)
            g[0, layer] = 2.0 * self.fold * float(s[0].imag)
        return self.fold * float(e[0].real), g

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

