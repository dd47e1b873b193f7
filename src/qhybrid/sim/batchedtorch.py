"""torch kernels for a batch of states run through one list of 2x2 gates: the generic path of
:mod:`.batched` (any device: CPU without numba, CUDA), on complex ``(B, 2**n)`` states.

Gates are applied in place on strided views: a gate on wire ``w`` sees the state as
``(B, 2**w, 2, 2**(n-w-1))``; a controlled gate only touches the control = 1 half. No
``movedim`` copies, no loop over samples. A matrix is ``(2, 2)`` (shared by the batch) or
``(B, 2, 2)`` (one per sample). These functions trust their inputs.
"""
from __future__ import annotations

import torch


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


def run(state: torch.Tensor, mats: torch.Tensor, gates, n: int, scratch: torch.Tensor) -> None:
    """Every gate (``(control, target)``, matrices ``mats`` ``(G, 2, 2)``) on ``state``, in place."""
    for (control, target), mat in zip(gates, mats):
        view, axis = gate_view(state, control, target, n)
        apply_2x2(view, axis, mat, scratch)


def sweep(psi: torch.Tensor, lam: torch.Tensor, mats: torch.Tensor, gates, n: int,
          scratch: torch.Tensor) -> torch.Tensor:
    """The adjoint sweep (in place): every gate undone from the last on ``psi`` and ``lam``;
    returns ``G[b]`` per sample and gate ``(B, G, 2, 2)``, ``G[a, c] = sum lam_a conj(psi_c)``
    with ``lam`` after and ``psi`` before the gate."""
    out = torch.empty((psi.shape[0],) + tuple(mats.shape), dtype=mats.dtype, device=mats.device)
    for k in range(len(gates) - 1, -1, -1):
        control, target = gates[k]
        inverse = mats[k].conj().transpose(-1, -2)
        pv, axis = gate_view(psi, control, target, n)
        lv, _ = gate_view(lam, control, target, n)
        apply_2x2(pv, axis, inverse, scratch)
        out[:, k] = reduce_2x2(lv, pv, axis, scratch)
        apply_2x2(lv, axis, inverse, scratch)
    return out


def product_state(factors: torch.Tensor, out: torch.Tensor, scratch: torch.Tensor) -> torch.Tensor:
    """``out[b] = factors[b, 0] (x) ... (x) factors[b, n-1]`` as ``(B, 2**n)`` in the flat buffer
    ``out``; ``scratch`` as large as ``out``."""
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
