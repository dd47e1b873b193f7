"""The plan: a circuit's fused structure, built once, bound to new parameters at each run.

A :class:`Plan` holds *segments* (what :func:`qhybrid.sim.fuse.build_plan` decided to fuse):
which operations each covers and how they run, nothing that depends on the parameters'
values, except the index maps of CNOT ladders (parameter-free, built with the plan). The forward
pass (:mod:`.simulate`) runs the bound steps in order; the adjoint sweep (:mod:`.adjoint`)
walks the same segments backwards, reading each one's derivatives and undoing it.

====================  =====================================================================
``layer``             1-qubit gates, one run per wire (``runs``: ``((wire, op indices), ...)``,
                      distinct wires, gates in circuit order); binds to a Dense (one wire) or
                      a Layer. Everything in it commutes with what lies between its gates.
``diagonal``          commuting diagonal gates (``mode``: ``product``, one diagonal over their
                      wires; ``lookup``, a phase table for Z-rotations across the register;
                      ``each``, one step per gate)
``gate``              one operation, unfused
``ladder``            a run of at least ``PERM_MIN`` CNOTs / SWAPs: one Permutation (``tables``)
====================  =====================================================================

A plan is valid for every list of operations with the same :func:`structure_key` (names, wires,
adjoint flags and parameter shapes); a caller may keep plans keyed by it and bind each call's
parameters with :meth:`Plan.bind`. Runs of Z-rotations are merged (one rotation per wire set):
the segments then index :meth:`Plan.operations`, and :meth:`Plan.jacobian_columns` takes the
adjoint's Jacobian back to the circuit's parameters.

Example::

    from qhybrid.sim.fuse import build_plan
    plan = build_plan(circuit.operations, circuit.n_wires)      # once per structure
    state = final_state(circuit, plan=plan)                     # binds this circuit's parameters
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .circuit import Operation
from .bind import diagonal_product, diagonal_steps, layer_step, layers_run_matrices, permutation_step, step_for


@dataclass(frozen=True, eq=False)
class Segment:
    """One fused part of a plan (see the module docstring for the kinds)."""

    kind: str
    ops: tuple
    wires: tuple
    runs: tuple = ()
    mode: str = ""
    swaps: tuple = ()
    tables: Any = None

    def bind(self, operations, n: int, *, dtype, device, cache=None, mats=None) -> list:
        """This segment's steps with the parameters of ``operations`` (indexed as the plan's;
        ``mats``: a layer's run matrices, :meth:`Plan.layer_matrices`, when the caller has them)."""
        if self.kind == "layer":
            return [layer_step(self.runs, operations, dtype=dtype, device=device, mats=mats)]
        if self.kind == "ladder":
            return [permutation_step(self.swaps, self.tables, dtype=dtype, device=device)]
        block = [operations[k] for k in self.ops]
        if self.kind == "gate":
            return [step_for(block[0], n, dtype=dtype, device=device)]
        if self.mode == "each":
            return [step_for(o, n, dtype=dtype, device=device) for o in block]
        if self.mode == "product":
            return [diagonal_product(block, list(self.wires), dtype=dtype, device=device)]
        return diagonal_steps(block, self.wires, n, lookup=True, dtype=dtype, device=device, cache=cache)


@dataclass(frozen=True, eq=False)
class Plan:
    """The segments of a circuit of ``n_wires`` wires, for operations of structure ``key``.

    ``layout`` (None: the circuit's operations as they are) says how the operations the
    segments index come from the circuit's: per such operation, the index of a circuit
    operation, or ``(name, wires, ((index, sign), ...))`` for a merged Z-rotation of angle
    ``sum sign * angle`` (see :func:`~qhybrid.sim.fuse.zrotation_groups`)."""

    n_wires: int
    segments: tuple
    key: tuple
    layout: Any = None

    def operations(self, operations) -> tuple:
        """The operations the segments index, from the circuit's ``operations`` (a merged
        rotation is trainable when one of its members is)."""
        ops = tuple(operations)
        if self.layout is None:
            return ops
        return tuple(ops[m] if type(m) is int else _merged(m, ops) for m in self.layout)

    def jacobian_columns(self, operations):
        """``(index, sign)`` arrays taking the Jacobian columns of :meth:`operations` (one per
        trainable operation, in order) to those of the circuit's ``operations``: column ``t``
        of the circuit is ``sign[t]`` times column ``index[t]``; None without a ``layout``."""
        if self.layout is None:
            return None
        ops = tuple(operations)
        column, c = {}, 0  # circuit operation -> (column of what it became, sign)
        for m in self.layout:
            members = ((m, 1),) if type(m) is int else m[2]
            if any(ops[k].trainable for k, _ in members):
                for k, sign in members:
                    column[k] = (c, sign)
                c += 1
        pairs = [column[k] for k, op in enumerate(ops) if op.trainable]
        return (np.array([p[0] for p in pairs], dtype=np.int64), np.array([p[1] for p in pairs], dtype=np.float64))

    def layer_matrices(self, ops) -> dict:
        """``{segment index: run matrices}`` (:func:`~qhybrid.sim.bind.run_matrices`) of the layer
        segments, for the operations :meth:`operations` gives, built in one batch: the forward
        pass binds its layers with them and the adjoint sweep reads each layer's gates from them."""
        where = [i for i, s in enumerate(self.segments) if s.kind == "layer"]
        if not where:
            return {}
        return dict(zip(where, layers_run_matrices([self.segments[i].runs for i in where], ops)))

    def bind(self, operations, *, dtype=torch.complex128, device="cpu", cache=None, matrices=None) -> list:
        """Per segment, the list of its steps with the parameters of ``operations`` (a list of the
        plan's structure; ``cache`` keeps phase-lookup indices; ``matrices``: the
        :meth:`layer_matrices` of these operations when the caller has them)."""
        ops = self.operations(operations)
        if matrices is None:
            matrices = self.layer_matrices(ops)
        return [s.bind(ops, self.n_wires, dtype=dtype, device=device, cache=cache, mats=matrices.get(i))
                for i, s in enumerate(self.segments)]

    def steps(self, operations, *, dtype=torch.complex128, device="cpu", cache=None, matrices=None) -> list:
        """Every bound step, in order (:meth:`bind` flattened)."""
        return [st for seg in self.bind(operations, dtype=dtype, device=device, cache=cache, matrices=matrices)
                for st in seg]


def _merged(entry, ops) -> Operation:
    name, wires, members = entry
    angle = sum(ops[k].params[0] if sign == 1 else -ops[k].params[0] for k, sign in members)
    return Operation(name, wires, (angle,), (0,) if any(ops[k].trainable for k, _ in members) else ())


def _shape(p) -> tuple:
    if type(p) is float or type(p) is int:  # the common case, without numpy's dispatch
        return ()
    return tuple(p.shape) if torch.is_tensor(p) else np.shape(p)


def structure_key(operations) -> tuple:
    """What a plan depends on: each operation's name, wires, adjoint flag and parameter shapes
    (scalar or broadcast). Operations of equal keys share a plan; parameter values never matter."""
    return tuple((op.name, tuple(op.wires), bool(op.adjoint), tuple(_shape(p) for p in op.params))
                 for op in operations)
