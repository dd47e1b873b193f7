"""Batched simulation and adjoint differentiation of a product state followed by 2x2 gates.

The circuit seen by this module (the derivation is in ``adjoint.md``):

    |psi_0> = v_0 (x) v_1 (x) ... (x) v_{n-1}        one 2-vector per wire and sample
    |psi_k> = U_k |psi_{k-1}>                         single-qubit or controlled 2x2 gates
    f       = <psi_G| O (x) 1 |psi_G>                  O: 2x2 Hermitian on wire 0

States are ``(B, 2**n)`` tensors, wire 0 the most significant bit (as in
:mod:`qhybrid.sim.kernels`). Gates are applied in place on strided views:
a gate on wire ``w`` sees the state as ``(B, 2**w, 2, 2**(n-w-1))``; a
controlled gate only touches the control = 1 half. No ``movedim`` copies, no
loop over samples.

:class:`CircuitExpval` is a ``torch.autograd.Function`` whose inputs are the
*matrices* (``factors``, ``mats``, ``obs``): the backward sweep (one pass back
through the gates, uncomputing ``psi`` and carrying ``lambda``) returns the
gradient of each matrix entry; autograd then chains it to the angles that
built the matrices. Per-sample matrices (the factors, which hold the input
angles) get per-sample gradients; shared ones are summed over the batch.

These functions trust their inputs (the layer validates).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from qhybrid.qml import fast
from qhybrid.sim.jit import notice


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


class Workspace:
    """A pool of flat scratch buffers, reused between calls (never pickled)."""

    def __init__(self, keep: int = 4):
        self._free: dict = {}
        self._keep = keep

    def get(self, numel: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
        pool = self._free.get((numel, dtype, str(device)))
        if pool:
            return pool.pop()
        return torch.empty(numel, dtype=dtype, device=device)

    def put(self, buf: torch.Tensor) -> None:
        pool = self._free.setdefault((buf.numel(), buf.dtype, str(buf.device)), [])
        if len(pool) < self._keep:
            pool.append(buf)

    def clear(self) -> None:
        self._free.clear()

    def __getstate__(self):
        return {"_keep": self._keep}

    def __setstate__(self, state):
        self.__init__(state.get("_keep", 4))

    def __deepcopy__(self, memo):
        return Workspace(self._keep)


def gate_view(state: torch.Tensor, control: int, target: int, n: int) -> tuple[torch.Tensor, int]:
    """A view of ``state`` with the target bit as an axis (control = 1 half only).

    Returns:
        ``(view, axis)``: the strided view and the index of the target axis.
    """
    b = state.shape[0]
    if control < 0:
        return state.view(b, 1 << target, 2, 1 << (n - target - 1)), 2
    if target > control:
        v = state.view(b, 1 << control, 2, 1 << (target - control - 1), 2, 1 << (n - target - 1))
        return v[:, :, 1], 3
    v = state.view(b, 1 << target, 2, 1 << (control - target - 1), 2, 1 << (n - control - 1))
    return v[:, :, :, :, 1], 2


def _entries(matrix: torch.Tensor, ndim: int):
    """The four entries of a ``(2, 2)`` or ``(B, 2, 2)`` matrix, shaped to broadcast."""
    shape = (matrix.shape[0],) + (1,) * (ndim - 1) if matrix.ndim == 3 else ()
    return [matrix[..., a, b].reshape(shape) for a in (0, 1) for b in (0, 1)]


def apply_2x2(view: torch.Tensor, axis: int, matrix: torch.Tensor, scratch: torch.Tensor) -> None:
    """``view <- matrix`` applied along ``axis``, in place; ``scratch`` holds half of ``view``."""
    a0 = view.select(axis, 0)
    a1 = view.select(axis, 1)
    u00, u01, u10, u11 = _entries(matrix, a0.ndim)
    tmp = scratch[: a0.numel()].view(a0.shape)
    torch.mul(a0, u00, out=tmp)
    tmp.addcmul_(a1, u01)
    a1.mul_(u11)
    a1.addcmul_(a0, u10)
    a0.copy_(tmp)


def reduce_2x2(lam: torch.Tensor, psi: torch.Tensor, axis: int, scratch: torch.Tensor) -> torch.Tensor:
    """``G[b, a, c] = sum over the other axes of lam[.., a, ..] * conj(psi[.., c, ..])``."""
    dims = tuple(range(1, lam.ndim - 1))
    out = torch.empty((lam.shape[0], 2, 2), dtype=lam.dtype, device=lam.device)
    half = lam.select(axis, 0)
    tmp = scratch[: half.numel()].view(half.shape)
    for a in (0, 1):
        la = lam.select(axis, a)
        for c in (0, 1):
            torch.mul(la, psi.select(axis, c).conj(), out=tmp)
            out[:, a, c] = tmp.sum(dim=dims)
    return out


def product_state(factors: torch.Tensor, out: torch.Tensor, scratch: torch.Tensor) -> torch.Tensor:
    """``out[b] = factors[b, 0] (x) ... (x) factors[b, n-1]``; ``scratch`` as large as ``out``."""
    b, n, _ = factors.shape
    bufs = (out, scratch) if n % 2 == 1 else (scratch, out)
    cur = factors[:, 0, :]
    if n == 1:
        out[: 2 * b].view(b, 2).copy_(cur)
    for i in range(1, n):
        dst = bufs[i % 2][: b << (i + 1)].view(b, 1 << i, 2)
        torch.mul(cur.unsqueeze(2), factors[:, i, None, :], out=dst)
        cur = dst.view(b, 2 << i)
    return out[: b << n].view(b, 1 << n)


def _prefix_products(factors: torch.Tensor) -> list[torch.Tensor]:
    """``prefix[i] = factors[:, 0] (x) ... (x) factors[:, i-1]``, ``(B, 2**i)``; ``prefix[0] = 1``."""
    b, n, _ = factors.shape
    prods = [torch.ones((b, 1), dtype=factors.dtype, device=factors.device)]
    for i in range(n - 1):
        prods.append((prods[-1].unsqueeze(2) * factors[:, i, None, :]).reshape(b, 2 << i))
    return prods


def factor_gradients(lam: torch.Tensor, factors: torch.Tensor) -> torch.Tensor:
    """``2 * sum lam[b, x, a, r] * conj(left[b, x] right[b, r])`` for every wire: ``(B, n, 2)``.

    ``left``/``right`` are the products of the factors before/after the wire. The
    right parts are contracted first, wire by wire from the last (``tail[k]`` is
    ``lam`` contracted with the conjugate factors of wires ``k..n-1``), so the
    whole costs a few passes over ``lam`` rather than ``n``.
    """
    b, n, _ = factors.shape
    conj = factors.conj()
    left = _prefix_products(conj)
    grads = torch.empty_like(factors)
    tail = lam
    for i in range(n - 1, -1, -1):  # tail: (B, 2**(i+1)) = lam contracted with wires > i
        pairs = tail.view(b, 1 << i, 2)
        grads[:, i, :] = torch.bmm(left[i].unsqueeze(1), pairs).squeeze(1)
        if i > 0:
            tail = torch.bmm(pairs, conj[:, i, :, None]).view(b, 1 << i)
    return 2 * grads


def _to_planes(arr, buf: torch.Tensor):
    """Copy complex ``arr`` ``(B, 2**n)`` into ``buf`` as real planes ``(B, 2, 2**n)`` (numpy view)."""
    b, size = arr.shape
    planes = buf.numpy().view(arr.real.dtype)[: 2 * b * size].reshape(b, 2, size)
    planes[:, 0] = arr.real
    planes[:, 1] = arr.imag
    return planes


def _from_planes(planes, arr) -> None:
    arr.real[:] = planes[:, 0]
    arr.imag[:] = planes[:, 1]


def simulate(factors, mats, plan: Plan, psi, scratch, kernel: str = "torch") -> torch.Tensor:
    """Run the circuit into the flat buffer ``psi``; return it as ``(B, 2**n)``.

    ``kernel``: ``"torch"`` (any device) or ``"numba"`` (CPU, :mod:`qhybrid.qml.fast`).
    """
    n = plan.n_wires
    state = product_state(factors, psi, scratch)
    if kernel == "numba":
        arr, mnp = state.numpy(), mats.detach().numpy()
        if not fast.by_sample(arr.shape[0]):
            fast.run(arr, mnp, plan.gates, n)
            return state
        planes = _to_planes(arr, scratch)
        fast.run_planar(planes, mnp, plan.gates, n)
        _from_planes(planes, arr)
        return state
    for (control, target), mat in zip(plan.gates, mats):
        view, axis = gate_view(state, control, target, n)
        apply_2x2(view, axis, mat, scratch)
    return state


def sweep_back(state, lam_state, mats, plan: Plan, scratch, kernel: str = "torch",
               spare=None) -> torch.Tensor:
    """The adjoint sweep: uncompute every gate on ``state`` and ``lam_state`` (in place).

    ``scratch``: a buffer as large as a state; ``spare``: another (numba only; for
    the planar copy of ``state``, whose complex form is not updated).

    Returns:
        ``(G, 2, 2)``: ``2 sum_b lam_k conj(psi_{k-1})`` reduced on each gate's wire.
    """
    n = plan.n_wires
    grad_mats = torch.empty_like(mats)
    if kernel == "numba":
        arr, larr, mnp = state.numpy(), lam_state.numpy(), mats.detach().numpy()
        if not fast.by_sample(arr.shape[0]):
            grad_mats.numpy()[:] = 2 * fast.sweep(arr, larr, mnp, plan.gates, n)
            return grad_mats
        planes = _to_planes(arr, spare if spare is not None else torch.empty_like(state))
        lam_planes = _to_planes(larr, scratch)
        grad_mats.numpy()[:] = 2 * fast.sweep_planar(planes, lam_planes, mnp, plan.gates, n)
        _from_planes(lam_planes, larr)
        return grad_mats
    for k in range(len(plan.gates) - 1, -1, -1):
        control, target = plan.gates[k]
        inverse = mats[k].conj().transpose(-1, -2)
        pv, axis = gate_view(state, control, target, n)
        lv, _ = gate_view(lam_state, control, target, n)
        apply_2x2(pv, axis, inverse, scratch)
        grad_mats[k] = 2 * reduce_2x2(lv, pv, axis, scratch).sum(0)
        apply_2x2(lv, axis, inverse, scratch)
    return grad_mats


def choose_kernel(kernel: str, device: torch.device) -> str:
    """``"auto"`` -> ``"numba"`` on CPU when numba is installed, else ``"torch"``."""
    if kernel == "auto":
        if device.type == "cpu" and not fast.available():
            notice()  # one line on stderr: the torch kernels stand in
        return "numba" if device.type == "cpu" and fast.available() else "torch"
    return kernel


class CircuitExpval(torch.autograd.Function):
    """``f[b] = <psi_b| O |psi_b>`` with adjoint gradients for factors, mats and obs."""

    @staticmethod
    def forward(ctx, factors, mats, obs, plan, workspace, kernel="torch"):
        b, n, _ = factors.shape
        numel = b << n
        kernel = choose_kernel(kernel, factors.device)
        psi = workspace.get(numel, factors.dtype, factors.device)
        scratch = workspace.get(numel, factors.dtype, factors.device)
        state = simulate(factors, mats, plan, psi, scratch, kernel)
        workspace.put(scratch)
        head = state.view(b, 2, 1 << (n - 1))
        rho = torch.bmm(head.conj(), head.transpose(1, 2))  # rho[b, a, c] = sum conj(psi_a) psi_c
        out = (rho * obs).sum(dim=(1, 2)).real
        if ctx.needs_input_grad[0] or ctx.needs_input_grad[1] or ctx.needs_input_grad[2]:
            ctx.save_for_backward(factors, mats, obs, rho)
            ctx.psi = psi
            ctx.plan = plan
            ctx.workspace = workspace
            ctx.kernel = kernel
        else:
            workspace.put(psi)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        factors, mats, obs, rho = ctx.saved_tensors
        plan, workspace, psi = ctx.plan, ctx.workspace, ctx.psi
        ctx.psi = None
        b, n, _ = factors.shape
        numel = b << n
        lam = workspace.get(numel, factors.dtype, factors.device)
        scratch = workspace.get(numel, factors.dtype, factors.device)
        spare = workspace.get(numel, factors.dtype, factors.device) if ctx.kernel == "numba" else None
        g = grad_out.to(factors.dtype)
        grad_obs = (g[:, None, None] * rho.conj()).sum(0)
        state = psi.view(b, 1 << n)
        lam_state = lam.view(b, 1 << n)
        half = 1 << (n - 1)
        torch.matmul(g[:, None, None] * obs, state.view(b, 2, half), out=lam_state.view(b, 2, half))
        grad_mats = sweep_back(state, lam_state, mats, plan, scratch, ctx.kernel, spare)
        grad_factors = None
        if ctx.needs_input_grad[0]:
            grad_factors = torch.from_numpy(fast.factor_gradients(lam_state.numpy(), factors.detach().numpy())) \
                if ctx.kernel == "numba" else factor_gradients(lam_state, factors)
        for buf in (psi, lam, scratch, spare):
            if buf is not None:
                workspace.put(buf)
        return grad_factors, grad_mats, grad_obs, None, None, None
