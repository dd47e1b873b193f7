"""The adjoint sweep's steps: derivatives read and gates undone, one plan segment at a time.

Helpers of :func:`qhybrid.sim.adjoint.adjoint_jacobian` (see ``README.md`` for the derivations):
``fused_step`` (one 1- or 2-qubit gate: overlap and undo in one pass per bra), ``layer_step``
(a layer segment on planes, optionally read through the CNOT ladder after it),
``product_step`` (a first layer on |0...0>: derivatives from the bras alone),
``diagonal_derivatives`` (a block of commuting diagonal gates, all read at the block's end) and
``undo_ladder``: the numba kernel set's fused adjoint steps (``NumbaKernels.adjoint_steps``);
kernels come from :mod:`.registry`.
"""
from __future__ import annotations

import functools

import numpy as np
import torch

from .apply import apply, generator_overlap
from .kernels.planar_layout import NO_TABLES, layer_passes
from .bind import ZROT, run_matrices
from .gates import gate_generator
from .registry import kernel, slots


@functools.lru_cache(maxsize=None)
def _generator_2x2(name: str, adjoint: bool) -> np.ndarray:
    g = gate_generator(name, 1, adjoint)
    g = np.diag(g) if np.ndim(g) == 1 else np.asarray(g, dtype=np.complex128)
    g.flags.writeable = False
    return g


def is_zrot(op) -> bool:
    """A Z-rotation with a scalar angle (its derivative is a parity dot, :func:`diagonal_derivatives`)."""
    return op.name in ZROT and np.ndim(op.params[0]) == 0


def fused_step(bras, ket, step, gen, n):
    """Overlaps <bra|G|ket> and the undo of a 1- or 2-qubit gate, one pass per bra."""
    inv = step.inverse()
    mats = inv.matrix if inv.kind == "dense" else torch.diag_embed(inv.diagonal)
    mats = mats.detach().resolve_conj().contiguous().numpy()
    d = mats.shape[-1]
    if gen is None:
        g = np.zeros((d, d), dtype=np.complex128)
    else:
        g = np.diag(gen) if np.ndim(gen) == 1 else np.asarray(gen)
        g = g.astype(np.complex128)
    name = "adjoint_1q" if d == 2 else "adjoint_2q"
    k = kernel(name, ket.shape[1])
    strides = tuple(1 << (n - 1 - w) for w in step.wires)
    kt = ket.numpy()
    out = []
    for m, bra in enumerate(bras):
        out.append(torch.from_numpy(k(bra.numpy(), kt, mats, g, *strides, m == len(bras) - 1)))
    return out


def layer_runs(runs, ops, cols, mats=None):
    """A layer segment's runs (``((wire, op indices), ...)``): ``(wires, S, derivs)``, each wire's run
    ``S = g_m ... g_1`` ((R, P, 2, 2) complex128, P = 1 or the batch) and ``derivs`` None (nothing
    trainable) or ``(runs, columns, M)``: per trainable gate k its run, its Jacobian column and
    ``M_k = S_k G S_k^+`` ((D, P, 2, 2)) with ``S_k = g_m ... g_{k+1}`` (see :func:`layer_step`).
    Every product is taken for all runs at once, position by position (``mats``: the runs'
    :func:`~qhybrid.sim.bind.run_matrices` when the caller has them, e.g. from the forward pass)."""
    if mats is None:
        mats = run_matrices(runs, ops)  # (R, L, P, 2, 2)
    L = mats.shape[1]
    after = np.empty_like(mats)  # after[:, j] = g_L ... g_{j+1}
    after[:, L - 1] = np.eye(2)
    for j in range(L - 2, -1, -1):
        after[:, j] = after[:, j + 1] @ mats[:, j + 1]
    whole = after[:, 0] @ mats[:, 0]
    where = [(r, j, k) for r, (_, idx) in enumerate(runs) for j, k in enumerate(idx) if ops[k].trainable]
    derivs = None
    if where:
        r_i, j_i, ks = (list(x) for x in zip(*where))
        S = after[r_i, j_i]  # (D, P, 2, 2)
        G = np.stack([_generator_2x2(ops[k].name, ops[k].adjoint) for k in ks])[:, None]
        derivs = (r_i, [cols[k] for k in ks], S @ G @ S.conj().swapaxes(-1, -2))
    return [w for w, _ in runs], whole, derivs


def run_derivatives(derivs, ov, jac) -> None:
    """``jac[:, column, :] = -2 Im tr(M R^T)`` for each ``(run, column, M)`` of
    :func:`layer_runs`, ``ov`` (M, B, R, 4) the runs' cross terms ``R[a, b] = sum ket_a
    conj(bra_b)`` (R00, R01, R10, R11), M broadcast over the batch rows."""
    if derivs is None:
        return
    runs, columns, M = derivs
    R = ov[:, :, runs].reshape(ov.shape[0], ov.shape[1], len(runs), 2, 2)
    val = (M.transpose(1, 0, 3, 2)[None] * R).sum((-1, -2))  # (M, B, D)
    jac[:, columns, :] = torch.from_numpy(np.ascontiguousarray((-2.0 * val.imag).transpose(0, 2, 1)))


def layer_step(seg, ops, cols, bra_all, ket, jac, n, *, undo=True, perm=None, spare=None, mats=None):
    """Backward step over a layer segment ``seg`` (1-qubit gates), on planes (:mod:`.fastplanar`), in the passes
    of :func:`~qhybrid.sim.apply.layer_passes` (gates on different wires commute, so each pass
    takes its own wires).

    With ``perm`` (a Permutation: the CNOT ladder after the layer, already inverted) the states
    are first read through that permutation: the first pass writes into ``spare`` (the
    ``(bra_all, ket)`` pair of spare buffers) and the second runs there, so the ladder costs no
    pass of its own. Returns the ``(bra_all, ket)`` that now hold the states.

    The gates on one wire form a run ``U = g_m ... g_1`` (often one gate), undone as one 2x2;
    every derivative of it comes from the wire's cross term ``R[a, b] = sum ket_a conj(bra_b)``,
    accumulated in the same pass: for gate k with generator G,
    ``<bra|S G S^+|ket> = tr(S G S^+ R^T)`` with ``S = g_m ... g_{k+1}``. With ``undo`` false (no
    trainable gate before the layer) only the cross terms are read, nothing is undone. ``mats``:
    the layer's run matrices when the caller has them (:func:`layer_runs`)."""
    N = ket.shape[1]
    wires, whole, derivs = layer_runs(seg.runs, ops, cols, mats)
    invs = whole.conj().transpose(0, 1, 3, 2).astype(ket.numpy().dtype)
    strides = np.array([1 << (n - 1 - w) for w in wires], dtype=np.int64)
    src = (bra_all.numpy(), ket.numpy())
    dst = src
    tables = NO_TABLES
    if perm is not None:
        tables = perm.gather
        if undo:
            bra_all, ket = spare
            dst = (bra_all.numpy(), ket.numpy())
    ov = np.zeros((bra_all.shape[0], ket.shape[0], len(wires), 4), dtype=np.complex128)
    for sel, local, starts, offs, W, colmajor in layer_passes(n, strides):
        ov[:, :, list(sel)] = kernel("adjoint_layer_planar", N)(
            *dst, *src, tables, np.ascontiguousarray(invs[list(sel)]), local, starts, offs, W, colmajor,
            slots(N), undo)
        if undo:  # the first pass has written the (permuted) states: the next read them in place
            src = dst
            tables = NO_TABLES
    run_derivatives(derivs, ov, jac)
    return bra_all, ket


def _all_but_one(x: np.ndarray, factors: np.ndarray) -> np.ndarray:
    """For a vector ``x`` over k wires (wire 0 its most significant bit) and one 2-vector per
    wire (``factors`` (k, 2)): per wire r, ``c_r[b] = sum over the other wires' indices of
    x[..b..] prod f_v[i_v]``, from the Kronecker products of the factors before r and after r
    (built up once). Returns (k, 2)."""
    k = len(factors)
    before, after = [np.ones(1, dtype=x.dtype)], [np.ones(1, dtype=x.dtype)]
    for r in range(k - 1):
        before.append(np.multiply.outer(before[-1], factors[r]).reshape(-1))
        after.append(np.multiply.outer(factors[k - 1 - r], after[-1]).reshape(-1))
    after.reverse()  # after[r]: the factors r+1 .. k-1
    return np.stack([np.einsum("a,abc,c->b", before[r], x.reshape(2**r, 2, -1), after[r]) for r in range(k)])


def product_step(seg, ops, cols, bras, jac, n, mats=None) -> None:
    """Backward step over the first segment, a layer of 1-qubit gates on |0...0>: the
    state after them is the product ``(x)_w phi_w`` (``phi_w = S_w|0>``, S_w the wire's run), so
    the cross terms need no ket and no pass of the planar kernels: ``R_w[a, b] = phi_w[a]
    conj(c_w[b])`` with ``c_w`` the bra contracted with ``conj(phi_v)`` on every other wire.
    Splitting the index into high and low halves, ``bra = M[h, l]``, one product ``Phi_H^* M``
    gives the low wires' ``c_w`` and one ``M Phi_L^*`` the high wires' (two passes of reads
    over each bra, instead of two read passes over bra and ket in the planes), each finished
    on a 2**(n/2) vector (numpy on the bras' own memory, in ``einsum``'s own loops: a
    threaded BLAS call on a 64 x 64 matrix costs milliseconds on a busy machine; ``mats`` as in
    :func:`layer_step`)."""
    wires, whole, derivs = layer_runs(seg.runs, ops, cols, mats)
    P, Mo, B = whole.shape[1], len(bras), bras[0].shape[0]
    phis = np.zeros((P, n, 2), dtype=np.complex128)
    phis[:, :, 0] = 1.0  # |0> on the wires without gates
    phis[:, wires] = whole[:, :, :, 0].transpose(1, 0, 2)  # (P, R, 2): S_w|0>
    s = n // 2  # low wires: n-s .. n-1 (n > 1)
    ov = np.zeros((Mo, B, len(wires), 4), dtype=np.complex128)
    for b in range(B):
        phi = phis[b % P]
        conj = phi.conj().astype(bras[0].numpy().dtype)
        hi, lo = conj[:n - s], conj[n - s:]
        phi_h, phi_l = _kron(hi), _kron(lo)
        for m, bra in enumerate(bras):
            M = bra[b].numpy().reshape(2 ** (n - s), 2**s)
            c = np.concatenate([_all_but_one(np.einsum("hl,l->h", M, phi_l), hi),
                                _all_but_one(np.einsum("hl,h->l", M, phi_h), lo)])[wires]  # (R, 2)
            ov[m, b] = (phi[wires][:, :, None] * c.conj()[:, None, :]).reshape(len(wires), 4)
    run_derivatives(derivs, ov, jac)


def _kron(vectors: np.ndarray) -> np.ndarray:
    """The Kronecker product of 2-vectors (at least one), the first the most significant."""
    out = vectors[0]
    for v in vectors[1:]:
        out = np.multiply.outer(out, v).reshape(-1)
    return out


def diagonal_derivatives(seg, ops, cols, bras, ket, jac, n) -> None:
    """The derivatives of a block of commuting diagonal gates, all read at the block's end (bra
    and ket are the same for every gate of it): the Z-rotations' from one parity-dot pass per bra
    (``dE/dtheta_g = sum_z P_g(z) Im(conj(bra) ket)``), any other's from its diagonal generator."""
    trainable = [k for k in seg.ops if ops[k].trainable]
    zrots = [k for k in trainable if is_zrot(ops[k])]
    if zrots:
        masks = np.array([sum(1 << (n - 1 - w) for w in ops[k].wires) for k in zrots], dtype=np.int64)
        sign = torch.tensor([-1.0 if ops[k].adjoint else 1.0 for k in zrots], dtype=torch.float64)
        idx = torch.tensor([cols[k] for k in zrots])
        grads = kernel("zrot_grads", ket.shape[1])
        for m, bra in enumerate(bras):
            jac[m, idx, :] = (torch.from_numpy(grads(bra.numpy(), ket.numpy(), masks)) * sign).T
    for k in trainable:
        if k in zrots:
            continue
        op = ops[k]
        gen = gate_generator(op.name, len(op.wires), op.adjoint)
        for m, bra in enumerate(bras):
            ov = generator_overlap(bra, ket, gen, tuple(op.wires), n, kernels="numba")
            jac[m, cols[k], :] = (-2.0 * ov.imag).to(torch.float64).cpu()


def undo_ladder(perm, bra_all, ket, spare, n, *, kernels, cache, with_ket=True):
    """The inverted ladder ``perm`` applied to the bras and (``with_ket``) to the ket: gathered
    into the spare buffers when there are some, which then hold the states, else in place
    (through scratch and back). Returns ``(bra_all, ket, spare)``, the old buffers the new spare."""
    if spare is None:
        for state in ([ket] if with_ket else []) + list(bra_all):
            apply(state, perm, n, kernels=kernels, cache=cache)
        return bra_all, ket, None
    flat = bra_all.reshape(-1, bra_all.shape[-1])
    kernels.permute_into(spare[0].reshape(flat.shape), flat, perm)
    if not with_ket:  # the ket keeps its buffer (nothing reads it any more)
        return spare[0], ket, (bra_all, spare[1])
    kernels.permute_into(spare[1], ket, perm)
    return spare[0], spare[1], (bra_all, ket)
