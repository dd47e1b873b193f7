"""Fusion: IR operations -> a :class:`~qhybrid.sim.plan.Plan` of few, cheap segments.

``build_plan(ops, n, fuse=True)`` decides from the circuit's structure alone:

* each maximal run of consecutive Z-rotations (``RZ``, ``IsingZZ``, ``MultiRZ`` with plain
  angles; a QAOA cost layer) becomes one rotation per distinct wire set, the 1-qubit ones first
  (all are diagonal, so they commute; the angles of one wire set add, an adjoint one counting
  -1): the plan's ``layout`` says how the bound operations come from the circuit's
  (:meth:`~qhybrid.sim.plan.Plan.operations`), and the adjoint sweep hands each merged
  rotation's derivative back to its members (:func:`zrotation_groups` also serves the plugin,
  which merges a tape's runs once per structure);
* single-qubit gates on one wire are multiplied into one pending run per wire (a diagonal
  single-qubit gate joins the run unless a diagonal block is open); pending runs are emitted
  together, as one ``layer`` segment (one blocked pass on planes);
* consecutive diagonal gates (RZ, PhaseShift, CZ, IsingZZ, MultiRZ, controlled phases,
  diagonal unitaries ...) pile up into one ``diagonal`` segment, applied in one pass: as one
  small diagonal over the union of their wires, or - when that union spans most of the
  register and all the gates are Z-rotations with plain (unbroadcast) angles, as in a QAOA
  cost layer - as a phase lookup ``table[index[z]]`` whose integer index is built once per
  block shape and kept in the caller's cache;
* pending runs and the diagonal block act on disjoint wires, so they commute; any gate that
  touches their wires flushes them first;
* runs of at least ``PERM_MIN`` CNOTs / SWAPs (entangling ladders) become one ``ladder``
  segment, an index permutation ``j -> h(j)``, linear over GF(2), applied as one gather pass.

``lower(ops, n, ...)`` is the plan bound at once: the list of steps one run applies. See
``README.md`` beside this file for why this is exact.
"""
from __future__ import annotations

import numpy as np
import torch

from .bind import PERMUTATIONS, ZROT, ladder_tables
from .gates import GATES
from .plan import Plan, Segment, structure_key
from .zrot import ZROT_NAME, zrotation_groups  # noqa: F401  (ZROT_NAME, zrotation_groups: also used from here)

#: Largest diagonal block applied as one small diagonal (more wires: lookup or gate by gate).
MAX_SMALL_DIAG = 12
#: Shortest run of CNOTs / SWAPs worth one gather pass (each swap touches half the state).
PERM_MIN = 3
#: Most wires a ladder's index tables cover (four ten-bit digits).
PERM_MAX_WIRES = 40


def _is_zrot(op) -> bool:
    return op.name in ZROT and np.ndim(op.params[0]) == 0


def _merge_layout(ops):
    """The plan's ``layout`` (see :class:`~qhybrid.sim.plan.Plan`) merging the Z-rotation runs of
    ``ops``, or None when no run changes (each wire set once, 1-qubit ones first already)."""
    layout, run, changed = [], [], False

    def close():
        nonlocal changed
        groups = zrotation_groups([(ops[k].wires, ops[k].adjoint) for k in run])
        if len(groups) < len(run) or any(len(ops[k].wires) > 1 for k in run[:sum(len(w) == 1 for w, _ in groups)]):
            changed = True
        for wires, members in groups:
            layout.append((ZROT_NAME.get(len(wires), "MultiRZ"), wires, tuple((run[i], s) for i, s in members)))
        run.clear()

    for k, op in enumerate(ops):
        if _is_zrot(op):
            run.append(k)
            continue
        close()
        layout.append(k)
    close()
    return tuple(layout) if changed else None


def build_plan(operations, n: int, *, fuse: bool = True) -> Plan:
    """The plan of ``operations`` on ``n`` wires (``Identity`` dropped); unfused, one ``gate``
    segment per operation. Depends only on :func:`~qhybrid.sim.plan.structure_key`."""
    ops = tuple(operations)
    key = structure_key(ops)
    layout = _merge_layout(ops) if fuse else None
    if layout is not None:  # the segments index the merged operations
        ops = Plan(n, (), key, layout).operations(ops)
    live = [k for k, op in enumerate(ops) if op.name != "Identity"]
    if not fuse:
        segs = [Segment("gate", (k,), tuple(ops[k].wires)) for k in live]
        return Plan(n, tuple(segs), key)
    out: list[Segment] = []
    pending: dict[int, list] = {}  # wire -> indices of its run of 1-qubit gates, in order
    block: list = []  # indices of the open diagonal block
    block_wires: set = set()

    def flush_runs(wires):
        # if any of ``wires`` has a pending run, emit them all: they commute with what follows
        # on other wires, and one layer runs as one blocked pass
        if any(w in pending for w in wires):
            runs = tuple((w, tuple(idx)) for w, idx in pending.items())
            out.append(Segment("layer", tuple(sorted(k for _, idx in runs for k in idx)),
                               tuple(w for w, _ in runs), runs=runs))
            pending.clear()

    def flush_block():
        if not block:
            return
        union = tuple(sorted(block_wires))
        big = len(union) > max(MAX_SMALL_DIAG, n - 4)
        mode = "product"
        if big and len(block) > 1:
            mode = "lookup" if all(_is_zrot(ops[k]) for k in block) else "each"
        out.append(Segment("diagonal", tuple(block), union, mode=mode))
        block.clear()
        block_wires.clear()

    for k in live:
        op = ops[k]
        gate = GATES[op.name]
        ws = tuple(op.wires)
        if len(ws) == 1 and (not gate.is_diagonal or ws[0] in pending or not block):
            if ws[0] in block_wires:
                flush_block()
            pending.setdefault(ws[0], []).append(k)
        elif gate.is_diagonal:
            flush_runs(ws)
            block.append(k)
            block_wires.update(ws)
        else:
            flush_runs(ws)
            if block_wires.intersection(ws):
                flush_block()
            out.append(Segment("gate", (k,), ws))
    flush_block()
    flush_runs(list(pending))
    return Plan(n, tuple(_ladders(_merge_layers(out), ops, n)), key, layout)


def cached_plan(operations, n: int, *, fuse: bool = True, cache=None) -> Plan:
    """:func:`build_plan`, kept in ``cache`` (a :class:`~qhybrid.sim.cache.Cache`) under the
    operations' :func:`~qhybrid.sim.plan.structure_key`: a caller that loops over one structure
    builds its plan once (without a cache, built each time)."""
    if cache is None:
        return build_plan(operations, n, fuse=fuse)
    ops = tuple(operations)
    key = ("plan", n, fuse, structure_key(ops))
    plan = cache.get(key)
    if plan is None:
        plan = build_plan(ops, n, fuse=fuse)
        cache.put(key, plan, PLAN_BYTES)
    return plan


#: What a cached plan counts for in a cache's byte budget (its ladder tables are shared).
PLAN_BYTES = 1 << 12


def _merge_layers(segs: list) -> list:
    """Consecutive ``layer`` segments as one: every gate in them is a 1-qubit gate, so each
    wire's gates join one run (in order) and runs on different wires commute."""
    out: list[Segment] = []
    for s in segs:
        if s.kind == "layer" and out and out[-1].kind == "layer":
            runs = {w: list(idx) for w, idx in out[-1].runs}
            for w, idx in s.runs:
                runs.setdefault(w, []).extend(idx)
            merged = tuple((w, tuple(idx)) for w, idx in runs.items())
            out[-1] = Segment("layer", tuple(sorted(out[-1].ops + s.ops)), tuple(runs), runs=merged)
        else:
            out.append(s)
    return out


def _ladders(segs: list, ops, n: int) -> list:
    """Runs of at least ``PERM_MIN`` CNOT / SWAP segments as one ``ladder`` segment."""
    if n > PERM_MAX_WIRES:
        return segs
    out, run = [], []

    def close():
        if len(run) >= PERM_MIN:
            swaps = tuple((tuple(ops[s.ops[0]].wires), ops[s.ops[0]].name == "CNOT") for s in run)
            wires = tuple(sorted({w for ws, _ in swaps for w in ws}))
            out.append(Segment("ladder", tuple(s.ops[0] for s in run), wires, swaps=swaps,
                               tables=ladder_tables(swaps, n)))
        else:
            out.extend(run)
        run.clear()

    for s in segs:
        if s.kind == "gate" and ops[s.ops[0]].name in PERMUTATIONS:
            run.append(s)
            continue
        close()
        out.append(s)
    close()
    return out


def lower(ops, n: int, *, dtype=torch.complex128, device="cpu", fuse: bool = True, cache=None) -> list:
    """The steps one run of ``ops`` applies: :func:`build_plan` bound to their parameters."""
    ops = tuple(ops)
    return build_plan(ops, n, fuse=fuse).steps(ops, dtype=dtype, device=device, cache=cache)
