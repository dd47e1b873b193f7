"""Batched simulation and adjoint differentiation of a product state followed by 2x2 gates.

The circuit seen by this module (the derivation is in ``adjoint.md``):

    |psi_0> = v_0 (x) v_1 (x) ... (x) v_{n-1}        one 2-vector per wire and sample
    |psi_k> = U_k |psi_{k-1}>                         single-qubit or controlled 2x2 gates
    f       = <psi_G| O (x) 1 |psi_G>                  O: 2x2 Hermitian on wire 0

States are ``(B, 2**n)`` tensors, wire 0 the most significant bit. The kernels are the
kernel set's (``KernelSet.qml_forward`` / ``qml_sweep`` / ``qml_factor_gradients``: the numba
set's :mod:`qhybrid.sim.batched` on planar states, serial kernels on the engine's threads, or
the torch reference's :mod:`qhybrid.sim.batchedtorch`, any device), state buffers are kept in a :class:`qhybrid.sim.cache.Cache` owned by the layer,
and :func:`qhybrid.sim.memory.check_memory` is asked before a call allocates.

:class:`CircuitExpval` is a ``torch.autograd.Function`` whose inputs are the
*matrices* (``factors``, ``mats``, ``obs``): the backward sweep (one pass back
through the gates, uncomputing ``psi`` and carrying ``lambda``) returns the
gradient of each matrix entry; autograd then chains it to the angles that
built the matrices. Per-sample matrices (the factors, which hold the input
angles) get per-sample gradients; shared ones are summed over the batch.

These functions trust their inputs (the layer validates).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from qhybrid.sim import batchedtorch
from qhybrid.sim.cache import keep_buffers, take_buffers
from qhybrid.sim.kernels import KernelSet, as_kernel_set
from qhybrid.sim.memory import available_bytes, check_memory


@dataclass(frozen=True)
class Plan:
    """The gate sequence after the product state.

    Attributes:
        n_wires: number of wires.
        gates: one ``(control, target)`` per gate; ``control = -1`` for an
            uncontrolled single-qubit gate on ``target``.
    """

    n_wires: int
    gates: tuple[tuple[int, int], ...]
    _layout: list = field(default_factory=list, init=False, repr=False, compare=False)

    def layout(self):
        """The numba kernels' loop layout of the gates (:func:`qhybrid.sim.batched.layout`), once."""
        if not self._layout:
            from qhybrid.sim import batched

            self._layout.append(batched.layout(self.n_wires, self.gates))
        return self._layout[0]


def choose_kernels(kernels, device: torch.device) -> KernelSet:
    """The kernel set for tensors on ``device``: a KernelSet or a name as is, ``"auto"`` / None
    the default (numba on CPU when installed, a one-line notice when not; else torch)."""
    return as_kernel_set(None if kernels == "auto" else kernels, device.type)


def _take(cache, role: str, like: torch.Tensor, numel: int) -> torch.Tensor:
    return take_buffers(cache, f"qml.{role}", [(numel,)], like.dtype, like.device)[0]


def _keep(cache, role: str, buf) -> None:
    if cache is not None and buf is not None:
        keep_buffers(cache, f"qml.{role}", (buf,))


def _check_memory(cache, batch: int, n: int, like: torch.Tensor, kernels: KernelSet) -> None:
    """MemoryLimitError when the call's state buffers would not fit; the buffers ``cache`` already
    holds count as free (they are reused, not allocated again)."""
    free = available_bytes(like.device)
    held = cache.nbytes if cache is not None else 0
    check_memory(n, batch=batch, dtype=like.dtype, n_states=kernels.qml_states, device=like.device,
                 available=None if free is None else free + held)


def simulate(factors, mats, plan: Plan, psi, scratch, kernels=None) -> torch.Tensor:
    """Run the circuit into the flat buffer ``psi``; return it as ``(B, 2**n)``.

    ``kernels``: the kernel set (None: the default for the device); ``scratch`` as large as ``psi``.
    """
    ks = choose_kernels(kernels, factors.device)
    state = batchedtorch.product_state(factors, psi, scratch)
    ks.qml_forward(state, mats, plan, scratch)
    return state


def sweep_back(state, lam_state, mats, plan: Plan, scratch, kernels=None, spare=None) -> torch.Tensor:
    """The adjoint sweep: uncompute every gate on ``state`` and ``lam_state`` (in place).

    ``scratch``: a buffer as large as a state; ``spare``: another (for a set that keeps a
    planar copy of ``state``, whose complex form is then not updated).

    Returns:
        ``(G, 2, 2)``: ``2 sum_b lam_k conj(psi_{k-1})`` reduced on each gate's wire.
    """
    ks = choose_kernels(kernels, state.device)
    return ks.qml_sweep(state, lam_state, mats, plan, scratch, spare)


class CircuitExpval(torch.autograd.Function):
    """``f[b] = <psi_b| O |psi_b>`` with adjoint gradients for factors, mats and obs.

    ``apply(factors, mats, obs, plan, cache, kernels)``: ``cache`` (a
    :class:`qhybrid.sim.cache.Cache`, or None) keeps the state buffers between calls;
    ``kernels`` the kernel set (a KernelSet, a name, or None / ``"auto"`` for the default).
    """

    @staticmethod
    def forward(ctx, factors, mats, obs, plan, cache, kernels=None):
        b, n, _ = factors.shape
        numel = b << n
        kernels = choose_kernels(kernels, factors.device)
        _check_memory(cache, b, n, factors, kernels)
        psi = _take(cache, "psi", factors, numel)
        scratch = _take(cache, "scratch", factors, numel)
        state = simulate(factors, mats, plan, psi, scratch, kernels)
        _keep(cache, "scratch", scratch)
        head = state.view(b, 2, 1 << (n - 1))
        rho = torch.bmm(head.conj(), head.transpose(1, 2))  # rho[b, a, c] = sum conj(psi_a) psi_c
        out = (rho * obs).sum(dim=(1, 2)).real
        if ctx.needs_input_grad[0] or ctx.needs_input_grad[1] or ctx.needs_input_grad[2]:
            ctx.save_for_backward(factors, mats, obs, rho)
            ctx.psi = psi
            ctx.plan = plan
            ctx.cache = cache
            ctx.kernels = kernels
        else:
            _keep(cache, "psi", psi)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        factors, mats, obs, rho = ctx.saved_tensors
        plan, cache, psi = ctx.plan, ctx.cache, ctx.psi
        ctx.psi = None
        b, n, _ = factors.shape
        numel = b << n
        lam = _take(cache, "lam", factors, numel)
        scratch = _take(cache, "scratch", factors, numel)
        spare = _take(cache, "spare", factors, numel) if ctx.kernels.qml_states > 3 else None
        g = grad_out.to(factors.dtype)
        grad_obs = (g[:, None, None] * rho.conj()).sum(0)
        state = psi.view(b, 1 << n)
        lam_state = lam.view(b, 1 << n)
        half = 1 << (n - 1)
        torch.matmul(g[:, None, None] * obs, state.view(b, 2, half), out=lam_state.view(b, 2, half))
        grad_mats = sweep_back(state, lam_state, mats, plan, scratch, ctx.kernels, spare)
        grad_factors = None
        if ctx.needs_input_grad[0]:
            grad_factors = ctx.kernels.qml_factor_gradients(lam_state, factors)
        for role, buf in (("psi", psi), ("lam", lam), ("scratch", scratch), ("spare", spare)):
            _keep(cache, role, buf)
        return grad_factors, grad_mats, grad_obs, None, None, None
