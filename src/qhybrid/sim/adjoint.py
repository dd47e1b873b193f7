"""Adjoint differentiation: one forward sweep, one backward sweep, a few states.

``adjoint_jacobian(circuit, *, dtype, device, fast, cache) -> (M, T, B)``
float64 tensor: ``d<O_m>/d theta_t`` for every expval measurement ``m``,
every trainable parameter ``t`` (operations in order, each operation's
``trainable`` indices in order) and every broadcast row ``b``.

With ``|ket>`` the final state and ``|bra_m> = O_m|ket>`` (a Hamiltonian is
applied once, not per term), walk the gates backwards: at gate
``U = exp(i theta G)``, ``dE/dtheta = 2 Re(i <bra|G|ket>)``; then undo the
gate on the ket and on every bra. Runs of Z-rotations (RZ, IsingZZ, MultiRZ,
as in QAOA cost layers) commute, so all of their derivatives come from one
pass over the pair of states and the run is undone by one phase pass. See
``README.md`` for the derivation.
"""
from __future__ import annotations

import numpy as np
import torch

from ..errors import OperationError
from .apply import NO_TABLES, apply_kop, generator_overlap, layer_passes, permute_into, use_fast
from .fuse import _PERMUTATIONS, PERM_MIN, ZROT, kop_for, lower, perm_kop
from .gates import GATES, gate_generator, gate_matrices_np
from .cache import keep_buffers, spare_buffers
from .memory import check_memory
from .observables import apply_observable
from .simulate import final_state

try:
    from . import fastkernels as _fk
except Exception:  # pragma: no cover
    _fk = None


def _columns(ops):
    cols, t = [], 0
    for op in ops:
        if len(op.trainable) > 1 or (op.trainable and GATES[op.name].generator is None):
            raise OperationError(
                f"adjoint differentiation needs single-parameter gates with a generator; "
                f"{op.name} on wires {op.wires} has trainable parameters {op.trainable}. "
                f"Decompose it first (e.g. Rot -> RZ RY RZ)"
            )
        cols.append(t if op.trainable else None)
        t += len(op.trainable)
    return cols, t


def _is_zrot(op) -> bool:
    return op.name in ZROT and np.ndim(op.params[0]) == 0


def _fused_step(bras, ket, kop, gen, n):
    """Overlaps <bra|G|ket> and the undo of a 1- or 2-qubit gate, one pass per bra."""
    inv = kop.inverse()
    mats = inv.data if inv.kind == "dense" else torch.diag_embed(inv.data)
    mats = mats.detach().resolve_conj().contiguous().numpy()
    d = mats.shape[-1]
    if gen is None:
        g = np.zeros((d, d), dtype=np.complex128)
    else:
        g = np.diag(gen) if np.ndim(gen) == 1 else np.asarray(gen)
        g = g.astype(np.complex128)
    name = "adjoint_1q" if d == 2 else "adjoint_2q"
    k = _fk.kernel(name, ket.shape[1])
    strides = tuple(1 << (n - 1 - w) for w in kop.wires)
    kt = ket.numpy()
    out = []
    for m, bra in enumerate(bras):
        out.append(torch.from_numpy(k(bra.numpy(), kt, mats, g, *strides, m == len(bras) - 1)))
    return out


def _zrot_run(ops, j, i, cols, bras, ket, jac, n, *, dtype, device, cache, fast, undo=True):
    """All derivatives of a run of commuting Z-rotations from one pass, then undo the run
    (unless ``undo`` is false: nothing trainable comes before it)."""
    run = ops[j:i + 1]
    tr = [(k, op_) for k, op_ in enumerate(run) if op_.trainable]
    if tr:
        masks = np.array([sum(1 << (n - 1 - w) for w in o.wires) for _, o in tr], dtype=np.int64)
        sign = torch.tensor([-1.0 if o.adjoint else 1.0 for _, o in tr], dtype=torch.float64)
        idx = torch.tensor([cols[j + k] for k, _ in tr])
        kern = _fk.kernel("zrot_grads", ket.shape[1])
        for m, bra in enumerate(bras):
            g = torch.from_numpy(kern(bra.numpy(), ket.numpy(), masks))  # (B, G)
            jac[m, idx, :] = (g * sign).T
    if not undo:
        return
    for kop in reversed(lower(run, n, dtype=dtype, device=device, fuse=True, cache=cache)):
        inv = kop.inverse()
        apply_kop(ket, inv, n, fast=fast)
        for bra in bras:
            apply_kop(bra, inv, n, fast=fast)


def _layer_start(ops, i, first) -> int:
    """Index of the first op of the run of 1-qubit gates ending at ``i``. Inside a cache block
    every 1-qubit gate whose stride is below the block sees complete amplitude pairs, so
    the whole run can be walked block by block (wires may repeat)."""
    j = i
    while j >= first and len(ops[j].wires) == 1:
        j -= 1
    return j + 1


def _generator_2x2(op) -> np.ndarray:
    g = gate_generator(op.name, 1, op.adjoint)
    return np.diag(g) if np.ndim(g) == 1 else np.asarray(g, dtype=np.complex128)


def _layer_runs(ops, j, i, cols):
    """The runs of 1-qubit gates ops[j..i] per wire: ``(wires, S, derivs)``: each wire's run
    ``S = g_m ... g_1`` ((R, P, 2, 2) complex128, P = 1 or the batch) and, per trainable gate k,
    ``(run, column, S_k G S_k^+)`` with ``S_k = g_m ... g_{k+1}`` (see :func:`_layer_step`)."""
    runs: dict = {}
    for k in range(j, i + 1):
        runs.setdefault(ops[k].wires[0], []).append(k)
    mats = gate_matrices_np(ops[j:i + 1], 1)
    whole, derivs = [], []
    eye = np.eye(2, dtype=np.complex128)[None]
    for r, idx in enumerate(runs.values()):
        S = eye
        for k in reversed(idx):
            op = ops[k]
            if op.trainable:
                derivs.append((r, cols[k], S @ _generator_2x2(op) @ S.conj().transpose(0, 2, 1)))
            S = S @ mats[k - j]
        whole.append(S)
    P = max(m.shape[0] for m in whole)
    return list(runs), np.stack([np.broadcast_to(m, (P, 2, 2)) for m in whole]), derivs


def _run_derivatives(derivs, ov, jac) -> None:
    """``jac[:, column, :] = -2 Im tr(M R^T)`` for each ``(run, column, M)`` of
    :func:`_layer_runs`, ``ov`` (M, B, R, 4) the runs' cross terms ``R[a, b] = sum ket_a
    conj(bra_b)`` (R00, R01, R10, R11), M broadcast over the batch rows."""
    if not derivs:
        return
    Pd = max(d[2].shape[0] for d in derivs)
    Mt = np.stack([np.broadcast_to(d[2], (Pd, 2, 2)) for d in derivs], axis=1).transpose(0, 1, 3, 2)
    R = ov[:, :, [d[0] for d in derivs]].reshape(ov.shape[0], ov.shape[1], len(derivs), 2, 2)
    val = (Mt[None] * R).sum((-1, -2))  # (M, B, D)
    jac[:, [d[1] for d in derivs], :] = torch.from_numpy(np.ascontiguousarray((-2.0 * val.imag).transpose(0, 2, 1)))


def _layer_step(ops, j, i, cols, bra_all, ket, jac, n, *, undo=True, perm=None, spare=None):
    """Backward step over ops[j..i] (1-qubit gates), on planes (:mod:`.fastplanar`), in the passes
    of :func:`~qhybrid.sim.apply.layer_passes` (gates on different wires commute, so each pass
    takes its own wires).

    With ``perm`` (a ``perm`` KOp: the CNOT ladder after the layer, already inverted) the states
    are first read through that permutation: the first pass writes into ``spare`` (the
    ``(bra_all, ket)`` pair of spare buffers) and the second runs there, so the ladder costs no
    pass of its own. Returns the ``(bra_all, ket)`` that now hold the states.

    The gates on one wire form a run ``U = g_m ... g_1`` (often one gate), undone as one 2x2;
    every derivative of it comes from the wire's cross term ``R[a, b] = sum ket_a conj(bra_b)``,
    accumulated in the same pass: for gate k with generator G,
    ``<bra|S G S^+|ket> = tr(S G S^+ R^T)`` with ``S = g_m ... g_{k+1}``. With ``undo`` false (no
    trainable gate before the layer) only the cross terms are read, nothing is undone."""
    N = ket.shape[1]
    wires, whole, derivs = _layer_runs(ops, j, i, cols)
    invs = whole.conj().transpose(0, 1, 3, 2).astype(ket.numpy().dtype)
    strides = np.array([1 << (n - 1 - w) for w in wires], dtype=np.int64)
    src = (bra_all.numpy(), ket.numpy())
    dst = src
    tables = NO_TABLES
    if perm is not None:
        tables = perm.data[0]
        if undo:
            bra_all, ket = spare
            dst = (bra_all.numpy(), ket.numpy())
    ov = np.zeros((bra_all.shape[0], ket.shape[0], len(wires), 4), dtype=np.complex128)
    for sel, local, starts, offs, W, colmajor in layer_passes(n, strides):
        ov[:, :, list(sel)] = _fk.kernel("adjoint_layer_planar", N)(
            *dst, *src, tables, np.ascontiguousarray(invs[list(sel)]), local, starts, offs, W, colmajor,
            _fk.slots(N), undo)
        if undo:  # the first pass has written the (permuted) states: the next read them in place
            src = dst
            tables = NO_TABLES
    _run_derivatives(derivs, ov, jac)
    return bra_all, ket


def _all_but_one(x: torch.Tensor, factors: list) -> list:
    """For a vector ``x`` over k wires (wire 0 its most significant bit) and one 2-vector per
    wire: per wire r, ``c_r[b] = sum over the other wires' indices of x[..b..] prod f_v[i_v]``,
    from the Kronecker products of the factors before r and after r (built up once)."""
    k = len(factors)
    before, after = [x.new_ones(1)], [x.new_ones(1)]
    for r in range(k - 1):
        before.append(torch.outer(before[-1], factors[r]).reshape(-1))
        after.append(torch.outer(factors[k - 1 - r], after[-1]).reshape(-1))
    after.reverse()  # after[r]: the factors r+1 .. k-1
    return [torch.einsum("a,abc,c->b", before[r], x.reshape(2**r, 2, 2 ** (k - r - 1)), after[r])
            for r in range(k)]


def _product_step(ops, i, cols, bras, jac, n) -> None:
    """Backward step over ops[0..i], 1-qubit gates that start the circuit from |0...0>: the
    state after them is the product ``(x)_w phi_w`` (``phi_w = S_w|0>``, S_w the wire's run), so
    the cross terms need no ket and no pass of the planar kernels: ``R_w[a, b] = phi_w[a]
    conj(c_w[b])`` with ``c_w`` the bra contracted with ``conj(phi_v)`` on every other wire.
    Splitting the index into high and low halves, ``bra = M[h, l]``, one product ``Phi_H^* M``
    gives the low wires' ``c_w`` and one ``M Phi_L^*`` the high wires' (two passes of reads
    over each bra, instead of two read passes over bra and ket in the planes), each finished
    on a 2**(n/2) vector."""
    wires, whole, derivs = _layer_runs(ops, 0, i, cols)
    col = {w: whole[r][:, :, 0] for r, w in enumerate(wires)}  # (P, 2): phi_w per batch row
    Mo, B = len(bras), bras[0].shape[0]
    s = n // 2  # low wires: n-s .. n-1 (n > 1)
    ov = np.zeros((Mo, B, len(wires), 4), dtype=np.complex128)
    zero = np.array([1.0, 0.0], dtype=np.complex128)
    for b in range(B):
        phis = np.stack([col[w][b % col[w].shape[0]] if w in col else zero for w in range(n)])  # (n, 2)
        conj = list(torch.from_numpy(phis.conj()).to(device=bras[0].device, dtype=bras[0].dtype))
        hi, lo = conj[:n - s], conj[n - s:]
        phi_h, phi_l = _kron(hi), _kron(lo)
        for m, bra in enumerate(bras):
            M = bra[b].reshape(2 ** (n - s), 2**s)
            c = torch.stack(_all_but_one(M @ phi_l, hi) + _all_but_one(M.T @ phi_h, lo))  # (n, 2)
            c = c.to(torch.complex128).cpu().numpy()[wires]
            ov[m, b] = (phis[wires][:, :, None] * c.conj()[:, None, :]).reshape(len(wires), 4)
    _run_derivatives(derivs, ov, jac)


def _kron(vectors: list) -> torch.Tensor:
    """The Kronecker product of 2-vectors (at least one), the first the most significant."""
    out = vectors[0]
    for v in vectors[1:]:
        out = torch.outer(out, v).reshape(-1)
    return out


def _undo_ladder(perm, bra_all, ket, spare, n, *, fast, cache, with_ket=True):
    """The inverted ladder ``perm`` applied to the bras and (``with_ket``) to the ket: gathered
    into the spare buffers when there are some, which then hold the states, else in place
    (through scratch and back). Returns ``(bra_all, ket, spare)``, the old buffers the new spare."""
    if spare is None:
        for state in ([ket] if with_ket else []) + list(bra_all):
            apply_kop(state, perm, n, fast=fast, cache=cache)
        return bra_all, ket, None
    flat = bra_all.reshape(-1, bra_all.shape[-1])
    permute_into(spare[0].reshape(flat.shape), flat, perm)
    if not with_ket:  # the ket keeps its buffer (nothing reads it any more)
        return spare[0], ket, (bra_all, spare[1])
    permute_into(spare[1], ket, perm)
    return spare[0], spare[1], (bra_all, ket)


def adjoint_jacobian(circuit, *, dtype=torch.complex128, device="cpu", fast: bool = True, cache=None,
                     fuse: bool = True, return_values: bool = False, state: torch.Tensor | None = None):
    """Jacobian of the expval measurements of ``circuit`` w.r.t. its trainable parameters.

    Args:
        circuit: a :class:`~qhybrid.sim.circuit.Circuit` whose measurements are all ``expval``.
        dtype, device, fast, cache, fuse: as in :func:`~qhybrid.sim.simulate.simulate`.
        state: the circuit's final state ``(B, 2**n)`` when the caller has it already (a
            forward pass saved for a vector-Jacobian product): the sweep starts from it and
            overwrites it; the forward pass is skipped.

    Returns:
        A float64 tensor of shape ``(M, T, B)``; with ``return_values`` the pair
        ``(values (M, B), jacobian)`` (the expvals come free from the forward sweep).

    Raises:
        OperationError: a trainable multi-parameter gate, or a non-expval measurement.
        MemoryLimitError: ket + M bras would not fit.
    """
    ops = [op for op in circuit.operations if op.name != "Identity"]
    n = circuit.n_wires
    obs = []
    for m in circuit.measurements:
        if m.kind != "expval":
            raise OperationError(f"adjoint differentiation supports expval only, not {m.kind!r}")
        obs.append(m.obs)
    cols, T = _columns(ops)
    B = circuit.batch_size
    check_memory(n, batch=B, dtype=dtype, device=device, n_states=2 + len(obs))
    shapes = ((len(obs), B, 2**n), (B, 2**n))  # bra_all, ket
    work = spare_buffers(cache, "adjoint_work", shapes, dtype, device)
    if state is None:
        ket = final_state(circuit, dtype=dtype, device=device, fast=fast, fuse=fuse, cache=cache, n_states=1,
                          out=None if work is None else work[1])
    elif work is not None:
        ket = work[1].copy_(state)
    else:
        ket = state
    fastz = use_fast(ket, fast)
    bra_all = torch.empty(shapes[0], dtype=ket.dtype, device=ket.device) if work is None else work[0]
    bras = [apply_observable(ket, o, n, cache=cache, fast=fast, out=bra_all[m]) for m, o in enumerate(obs)]
    if fastz:
        vd = _fk.kernel("vdot_real", ket.shape[1])
        values = torch.stack([torch.from_numpy(vd(ket.numpy(), b.numpy())) for b in bras]) \
            if bras else torch.zeros(0, B, dtype=torch.float64)
    else:
        values = torch.stack([torch.sum(ket.conj() * b, dim=1).real.to(torch.float64).cpu() for b in bras]) \
            if bras else torch.zeros(0, B, dtype=torch.float64)
    jac = torch.zeros(len(obs), T, B, dtype=torch.float64)
    first = next((k for k, op in enumerate(ops) if op.trainable), len(ops))
    pending = None  # an inverted CNOT ladder not yet applied (the next layer step may read through it)
    spare = spare_buffers(cache, "adjoint_spare", shapes, dtype, device) if fastz else None
    i = len(ops) - 1
    while i >= first and bras:
        op = ops[i]
        j = i
        while fastz and j > first and _is_zrot(ops[j - 1]):
            j -= 1
        zrun = fastz and _is_zrot(op) and i - j >= 2
        lj = _layer_start(ops, i, first) if fastz and not zrun else i
        # a first layer on |0...0>: its derivatives come from the bras alone (_product_step)
        product = lj == 0 and i > 0 and circuit.initial_state is None and n > 1
        if pending is not None and (spare is None or lj >= i or product):  # no layer step reads through it
            bra_all, ket, spare = _undo_ladder(pending, bra_all, ket, spare, n, fast=fast, cache=cache,
                                               with_ket=not product)
            bras = list(bra_all)
            pending = None
        if zrun:
            _zrot_run(ops, j, i, cols, bras, ket, jac, n, dtype=dtype, device=device, cache=cache, fast=fast,
                      undo=j > first)
            i = j - 1
            continue
        j = i
        while fastz and j > 0 and ops[j - 1].name in _PERMUTATIONS and op.name in _PERMUTATIONS:
            j -= 1
        if i - j + 1 >= PERM_MIN and n <= 40:  # a CNOT / SWAP ladder: one index permutation
            # undone when a step before it needs the states (not at all when none does)
            pending = perm_kop([kop_for(o, n, dtype=dtype, device=device) for o in ops[j:i + 1]], n, cache).inverse()
            i = j - 1
            continue
        j = lj
        if product:
            _product_step(ops, i, cols, bras, jac, n)
            break
        if j < i:
            undo = j > first
            new_bra_all, new_ket = _layer_step(ops, j, i, cols, bra_all, ket, jac, n, undo=undo,
                                               perm=pending, spare=spare)
            if new_ket is not ket:  # the states moved to the spare buffers, which take the old ones
                spare = (bra_all, ket)
                bra_all, ket = new_bra_all, new_ket
                bras = list(bra_all)
            pending = None
            i = j - 1
            continue
        kop = kop_for(op, n, dtype=dtype, device=device)
        gen = gate_generator(op.name, len(op.wires), op.adjoint) if op.trainable else None
        if fastz and len(op.wires) in (1, 2) and kop.kind != "swap":
            ovs = _fused_step(bras, ket, kop, gen, n)
        else:
            ovs = [generator_overlap(bra, ket, gen, tuple(op.wires), n, fast=fast) for bra in bras] \
                if gen is not None else []
            inv = kop.inverse()
            apply_kop(ket, inv, n, fast=fast)
            for bra in bras:
                apply_kop(bra, inv, n, fast=fast)
        if gen is not None:
            for m, ov in enumerate(ovs):
                jac[m, cols[i], :] = (-2.0 * ov.imag).to(torch.float64).cpu()
        i -= 1
    if work is not None:  # the buffers now holding the states serve the next call
        keep_buffers(cache, "adjoint_work", (bra_all, ket))
    if spare is not None:
        keep_buffers(cache, "adjoint_spare", spare)
    return (values, jac) if return_values else jac
