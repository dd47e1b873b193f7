"""The torch reference kernel set: plain torch ops, the same code on CPU and CUDA.

Every other set is checked against this one (``tests/sim/kernelsets.py``); a set may subclass
it and override only what it has. Gates go through :mod:`.torch_ops` (``apply_matrix``,
``apply_diagonal``: a matmul on a moved view, a broadcast multiply); CNOT / SWAP are index
views, no arithmetic. The QAOA sweep is :mod:`qhybrid.qaoa.torch_engine`; the QML layer's
kernels are :mod:`qhybrid.sim.batchedtorch`.
"""
from __future__ import annotations

import numpy as np
import torch

from . import torch_ops
from .base import KernelSet


def _parity(x: torch.Tensor) -> torch.Tensor:
    x = x.clone()
    shift = 32
    while shift:
        x ^= x >> shift
        shift >>= 1
    return x & 1


def _pauli(state: torch.Tensor, x: int, z: int) -> torch.Tensor:
    """``P state`` (without ``i^{nY}``): ``(-1)^{popcount(c & z)} state[c ^ x]`` at ``c ^ x``."""
    ar = torch.arange(state.shape[1], device=state.device)
    src = ar ^ x
    sign = (1 - 2 * _parity(src & z)).to(state.real.dtype)
    return state[:, src] * sign


class TorchKernels(KernelSet):
    """The reference: torch tensor ops on CPU or CUDA (see :class:`~.base.KernelSet`)."""

    name = "torch"
    device_types = ("cpu", "cuda")

    # -- gates --------------------------------------------------------------------------------
    def apply_dense(self, state, matrix, wires, n):
        m = matrix if matrix.shape[0] > 1 else matrix[0]
        state.copy_(torch_ops.apply_matrix(state, m, list(wires), n))

    def apply_swap(self, state, wires, ctrl, n):
        psi = state.view((state.shape[0],) + (2,) * n)
        a, b = 1 + wires[0], 1 + wires[1]
        if ctrl:  # flip the target where the control is 1
            sub = psi.select(a, 1)
            axis = b - 1 if b > a else b
            sub.copy_(sub.flip(axis))
        else:
            psi.copy_(psi.transpose(a, b).clone())

    def apply_diagonal(self, state, diagonal, wires, n):
        state.copy_(torch_ops.apply_diagonal(state, diagonal, list(wires), n))

    def phase_lookup(self, state, table, index):
        state.mul_(table[:, index.long()])

    def apply_permutation(self, state, step, n, *, cache=None):
        for swap in step.swaps:
            self.apply_swap(state, swap.wires, swap.ctrl, n)

    def apply_layer(self, state, step, n, *, perm=None, src=None, after=None, spare=None):
        if perm is not None:
            state.copy_(src)
            self.apply_permutation(state, perm, n)
        for r, w in enumerate(step.wires):
            m = step.matrices[r] if step.matrices.shape[1] > 1 else step.matrices[r, 0]
            state.copy_(torch_ops.apply_matrix(state, m, [w], n))
        if after is not None:
            self.apply_permutation(state, after, n)
        return state

    def walsh_hadamard(self, state, wires, n):
        for w in wires:
            v = state.view(state.shape[0], 1 << w, 2, 1 << (n - 1 - w))
            a, b = v[:, :, 0].clone(), v[:, :, 1]
            v[:, :, 0].add_(b)
            v[:, :, 1].neg_().add_(a)

    # -- observables and inner products -----------------------------------------------------
    def weighted_norm(self, state, weights):
        return ((state.real**2 + state.imag**2) * weights).sum(1).to(torch.float64).cpu()

    def pauli_expval(self, state, x, z):
        return (state.conj() * _pauli(state, x, z)).sum(1).to(torch.complex128).cpu()

    def diag_mul_into(self, out, state, weights):
        out.copy_(state)
        out.mul_(weights.to(state.real.dtype))

    def pauli_sum_into(self, out, state, terms):
        for c, x, z in terms:
            out.add_(_pauli(state, x, z), alpha=c)

    def vdot_real(self, ket, bra):
        return torch.sum(ket.conj() * bra, dim=1).real.to(torch.float64).cpu()

    def generator_overlap(self, bra, ket, gen, wires, n):
        g = torch.tensor(np.asarray(gen), dtype=ket.dtype, device=ket.device)
        if not wires:
            return (g.reshape(-1)[0] * torch.sum(bra.conj() * ket, dim=1)).to(torch.complex128).cpu()
        if g.ndim == 1:
            gk = torch_ops.apply_diagonal(ket, g, list(wires), n)
        else:
            gk = torch_ops.apply_matrix(ket, g, list(wires), n)
        return torch.sum(bra.conj() * gk, dim=1).to(torch.complex128).cpu()

    # -- QAOA ---------------------------------------------------------------------------------
    def qaoa_engine(self, diagonal, *, dtype, device, symmetric, memory_limit=None, **options):
        from qhybrid.qaoa.torch_engine import TorchQAOA

        return TorchQAOA(diagonal, dtype=dtype, device=device, memory_limit=memory_limit)

    def qaoa_cost_phase(self, state, cost, gamma):
        state.mul_(torch.polar(torch.ones_like(cost), -gamma * cost).to(state.dtype))

    def qaoa_mixer(self, state, beta, n):
        c, s = np.cos(beta), -1j * np.sin(beta)
        rx = torch.tensor([[[c, s], [s, c]]], dtype=state.dtype, device=state.device)
        for w in range(n):
            state.copy_(torch_ops.apply_matrix(state, rx[0], [w], n))

    # -- the QML layer ------------------------------------------------------------------------
    def qml_forward(self, state, mats, plan, scratch):
        from qhybrid.sim import batchedtorch

        batchedtorch.run(state, mats, plan.gates, plan.n_wires, scratch)

    def qml_sweep(self, state, lam, mats, plan, scratch, spare=None):
        from qhybrid.sim import batchedtorch

        return 2 * batchedtorch.sweep(state, lam, mats, plan.gates, plan.n_wires, scratch)

    def qml_factor_gradients(self, lam, factors):
        from qhybrid.sim import batchedtorch

        return batchedtorch.factor_gradients(lam, factors)
