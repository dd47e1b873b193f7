"""Adjoint differentiation: one forward sweep, one backward sweep, a few states.

``adjoint_jacobian(circuit, *, dtype, device, kernels, cache) -> (M, T, B)``
float64 tensor: ``d<O_m>/d theta_t`` for every expval measurement ``m``,
every trainable parameter ``t`` (operations in order, each operation's
``trainable`` indices in order) and every broadcast row ``b``.

With ``|ket>`` the final state and ``|bra_m> = O_m|ket>`` (a Hamiltonian is
applied once, not per term), walk the gates backwards: at gate
``U = exp(i theta G)``, ``dE/dtheta = 2 Re(i <bra|G|ket>)``; then undo the
gate on the ket and on every bra. Runs of Z-rotations (RZ, IsingZZ, MultiRZ,
as in QAOA cost layers) commute, so all of their derivatives come from one
pass over the pair of states and the run is undone by one phase pass. The plan merges each
run per wire set (:func:`~qhybrid.sim.fuse.build_plan`): the sweep runs on the merged
operations and each member's derivative is its merged rotation's (``Plan.jacobian_columns``).

The sweep walks the circuit's plan (:mod:`.plan`, the one the forward pass ran) backwards,
segment by segment: on a kernel set with fused adjoint steps (``KernelSet.adjoint_steps``, the
numba set's :mod:`.adjoint_steps`) a layer, a diagonal block, a CNOT ladder or one gate each have
their step; other sets walk gate by gate (:meth:`KernelSet.generator_overlap` and the undo of
each gate). See ``README.md`` for the derivation.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..errors import OperationError
from .apply import apply
from .bind import PERMUTATIONS, step_for
from .cache import keep_buffers, spare_buffers
from .fuse import cached_plan
from .gates import adjoint_columns, gate_generator
from .memory import check_memory
from .kernels import as_kernel_set
from .observables import apply_observable
from .simulate import final_state


def adjoint_jacobian(circuit, *, dtype=torch.complex128, device="cpu", kernels=None, cache=None,
                     fuse: bool = True, return_values: bool = False, state: torch.Tensor | None = None,
                     plan=None):
    """Jacobian of the expval measurements of ``circuit`` w.r.t. its trainable parameters.

    Args:
        circuit: a :class:`~qhybrid.sim.circuit.Circuit` whose measurements are all ``expval``.
        dtype, device, kernels, cache, fuse, plan: as in :func:`~qhybrid.sim.simulate.simulate`.
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
    ops = tuple(circuit.operations)
    n = circuit.n_wires
    obs = _expval_observables(circuit)
    B = circuit.batch_size
    adjoint_columns(ops)  # a trainable gate without a generator is refused before any work
    check_memory(n, batch=B, dtype=dtype, device=device, n_states=2 + len(obs))
    if plan is None:
        plan = cached_plan(ops, n, fuse=fuse, cache=cache)  # as final_state keeps it
    ks = as_kernel_set(kernels, torch.device(device).type)
    back = plan.jacobian_columns(ops)  # merged Z-rotations: their derivatives back to the members
    if back is not None:
        ops = plan.operations(ops)
    cols, T = adjoint_columns(ops)
    shapes = ((len(obs), B, 2**n), (B, 2**n))  # bra_all, ket
    work = spare_buffers(cache, "adjoint_work", shapes, dtype, device)
    mats = plan.layer_matrices(ops)  # the layers' gates: bound by the forward pass, read by the sweep
    if state is None:
        ket = final_state(circuit, dtype=dtype, device=device, kernels=ks, cache=cache, n_states=1,
                          out=None if work is None else work[1], plan=plan, matrices=mats)
    else:
        ket = state if work is None else work[1].copy_(state)
    bra_all = torch.empty(shapes[0], dtype=ket.dtype, device=ket.device) if work is None else work[0]
    bras = [apply_observable(ket, o, n, cache=cache, kernels=ks, out=bra_all[m]) for m, o in enumerate(obs)]
    values = torch.stack([ks.vdot_real(ket, b) for b in bras]) if bras else torch.zeros(0, B, dtype=torch.float64)
    sweep = _Sweep(ops=ops, cols=cols, n=n, jac=torch.zeros(len(obs), T, B, dtype=torch.float64), ks=ks,
                   mats=mats, bind=dict(dtype=dtype, device=device, cache=cache), bra_all=bra_all, ket=ket,
                   bras=bras, product_start=circuit.initial_state is None and n > 1,
                   spare=spare_buffers(cache, "adjoint_spare", shapes, dtype, device) if ks.adjoint_steps is not None else None)
    if bras:
        sweep.run(plan.segments)
    jac = sweep.jac
    if back is not None:
        jac = jac[:, torch.from_numpy(back[0]), :] * torch.from_numpy(back[1])[None, :, None]
    if work is not None:  # the buffers now holding the states serve the next call
        keep_buffers(cache, "adjoint_work", (sweep.bra_all, sweep.ket))
    if sweep.spare is not None:
        keep_buffers(cache, "adjoint_spare", sweep.spare)
    return (values, jac) if return_values else jac


def _expval_observables(circuit) -> list:
    """The observables of ``circuit``'s measurements, all of which must be expvals."""
    obs = []
    for m in circuit.measurements:
        if m.kind != "expval":
            raise OperationError(f"adjoint differentiation supports expval only, not {m.kind!r}")
        obs.append(m.obs)
    return obs


@dataclass
class _Sweep:
    """The backward sweep's states and what it writes: the bras (one per observable, rows of
    ``bra_all``) and the ket, the spare buffers a fused layer step may move them into, an inverted
    CNOT ladder not yet applied (``pending``: the next layer step may read through it), and ``jac``."""

    ops: tuple
    cols: list
    n: int
    jac: torch.Tensor
    ks: object
    mats: dict
    bind: dict
    bra_all: torch.Tensor
    ket: torch.Tensor
    bras: list
    product_start: bool  # the circuit starts from |0...0> on 2+ wires
    spare: tuple | None = None
    pending: object = None

    def run(self, segs) -> None:
        """Walk ``segs`` (the plan's segments) backwards down to the first with a trainable gate."""
        ops = self.ops
        first = next((s for s, seg in enumerate(segs) if any(ops[k].trainable for k in seg.ops)), len(segs))
        for s in range(len(segs) - 1, first - 1, -1):
            seg = segs[s]
            if self.ks.adjoint_steps is None:  # gate by gate
                _generic_step(seg, ops, self.cols, self.bras, self.ket, self.jac, self.n, kernels=self.ks)
            elif self._fused(s, seg, undo=s > first):
                break

    def _fused(self, s: int, seg, *, undo: bool) -> bool:
        """One segment by the kernel set's fused steps; True when the sweep is done (a first layer
        on |0...0>, whose derivatives come from the bras alone)."""
        fused, ops, n, ks = self.ks.adjoint_steps, self.ops, self.n, self.ks
        if seg.kind == "ladder":  # undone when a step before it needs the states
            (perm,) = seg.bind(ops, n, **self.bind)
            self.pending = perm.inverse()
            return False
        layer = seg.kind == "layer" and len(seg.ops) > 1
        product = layer and s == 0 and self.product_start
        if self.pending is not None and (self.spare is None or not layer or product):  # nothing reads through it
            self.bra_all, self.ket, self.spare = fused.undo_ladder(
                self.pending, self.bra_all, self.ket, self.spare, n, kernels=ks, cache=self.bind["cache"],
                with_ket=not product)
            self.bras = list(self.bra_all)
            self.pending = None
        if product:
            fused.product_step(seg, ops, self.cols, self.bras, self.jac, n, self.mats.get(s))
            return True
        if layer:
            new_bra_all, new_ket = fused.layer_step(seg, ops, self.cols, self.bra_all, self.ket, self.jac, n,
                                                    undo=undo, perm=self.pending, spare=self.spare,
                                                    mats=self.mats.get(s))
            if new_ket is not self.ket:  # the states moved to the spare buffers, which take the old ones
                self.spare = (self.bra_all, self.ket)
                self.bra_all, self.ket = new_bra_all, new_ket
                self.bras = list(self.bra_all)
            self.pending = None
            return False
        self._single(seg, undo=undo)
        return False

    def _single(self, seg, *, undo: bool) -> None:
        """A one-gate segment, a diagonal block, or anything else gate by gate."""
        fused, ops, n = self.ks.adjoint_steps, self.ops, self.n
        op = ops[seg.ops[0]]
        if len(seg.ops) == 1 and len(op.wires) in (1, 2) and op.name not in PERMUTATIONS:
            gen = gate_generator(op.name, len(op.wires), op.adjoint) if op.trainable else None
            step = step_for(op, n, dtype=self.bind["dtype"], device=self.bind["device"])
            ovs = fused.fused_step(self.bras, self.ket, step, gen, n)
            if gen is not None:
                for m, ov in enumerate(ovs):
                    self.jac[m, self.cols[seg.ops[0]], :] = (-2.0 * ov.imag).to(torch.float64).cpu()
        elif seg.kind == "diagonal":
            fused.diagonal_derivatives(seg, ops, self.cols, self.bras, self.ket, self.jac, n)
            if undo:
                _undo(seg.bind(ops, n, **self.bind), self.bras, self.ket, n, kernels=self.ks)
        else:
            _generic_step(seg, ops, self.cols, self.bras, self.ket, self.jac, n, kernels=self.ks)


def _undo(steps, bras, ket, n, *, kernels) -> None:
    """``steps`` undone (in reverse order) on the ket and on every bra."""
    for step in reversed(steps):
        inv = step.inverse()
        apply(ket, inv, n, kernels=kernels)
        for bra in bras:
            apply(bra, inv, n, kernels=kernels)


def _generic_step(seg, ops, cols, bras, ket, jac, n, *, kernels) -> None:
    """Gate by gate, last first (the reference path, and gates the fast steps do not cover):
    ``<bra|G|ket>`` for a trainable gate, then its undo on the ket and every bra."""
    for k in reversed(seg.ops):
        op = ops[k]
        gen = gate_generator(op.name, len(op.wires), op.adjoint) if op.trainable else None
        if gen is not None:
            for m, bra in enumerate(bras):
                ov = kernels.generator_overlap(bra, ket, gen, tuple(op.wires), n)
                jac[m, cols[k], :] = (-2.0 * ov.imag).to(torch.float64).cpu()
        _undo([step_for(op, n, dtype=ket.dtype, device=ket.device)], bras, ket, n, kernels=kernels)
