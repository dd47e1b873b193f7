"""Tape -> engine circuit, worked out once per tape *structure*.

An optimisation loop sends the device the same circuit again and again with new
parameters. What a tape's structure decides (which table gate each operation
becomes, on which wires, which parameters are trainable, how Z-rotations
combine, which engine column each tape parameter's derivative comes from) is
kept in a :class:`TapePlan`; a call then only reads the tape's parameters and
fills them in (:meth:`TapePlan.circuit`).

Runs of consecutive Z-rotations (``RZ``, ``IsingZZ``, ``MultiRZ``, Z-word
``PauliRot``; a QAOA cost layer) are diagonal and commute, so the plan merges
the rotations of one Pauli-Z word into one gate (their angles add) and puts the
1-qubit ones first: a cost layer with hundreds of terms becomes one rotation
per distinct word, which the engine fuses into a 1-qubit layer and one phase
lookup. The derivative of each merged tape parameter is its gate's derivative
(times -1 for an adjoint rotation). The grouping is the engine's
(:func:`qhybrid.sim.zrot.zrotation_groups`, which merges every circuit's runs); done here once
per tape structure, a call builds one engine operation per word instead of one per term.

Operations the table does not run (applied as a matrix) and a state
preparation depend on their parameters in ways the plan does not model: they
are converted at every call. Trusts that the device's preprocess has run.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
from pennylane.operation import StatePrepBase

from ..sim.circuit import Circuit, Measurement, Operation
from ..sim.zrot import ZROT_NAME, zrotation_groups
from .convert import _native, convert_observable, convert_op, evolution_gates, op_wire_labels, to_numpy

#: Z-rotations ``exp(-i theta/2 Z...Z)`` by number of wires (the same convention for all).
_ZROT = {"RZ", "IsingZZ", "MultiRZ"}
#: Dimensions of one (unbroadcast) parameter beyond a number: a matrix, a diagonal.
_CORE_NDIM = {"QubitUnitary": 2, "DiagonalQubitUnitary": 1}


@dataclass(frozen=True)
class Slot:
    """One engine operation of a plan.

    Args:
        name, wires, adjoint: as in :class:`~qhybrid.sim.circuit.Operation` (engine wires).
        sources: per engine parameter, the ``(flat tape parameter index, factor)`` pairs: the
            parameter is the sum of ``factor * tape parameter``.
        trainable: the engine parameters whose derivative the adjoint sweep returns.
        op_index: for an operation converted at every call (a matrix), its index on the tape
            (then ``name`` is ``""``), else -1.
    """

    name: str
    wires: tuple
    adjoint: bool
    sources: tuple
    trainable: tuple
    op_index: int = -1


@dataclass(frozen=True)
class TapePlan:
    """What a tape's structure decides; :meth:`circuit` fills in one call's parameters.

    ``chain`` is the ``(C, T)`` matrix of ``d engine parameter c / d tape parameter t`` over the
    engine's Jacobian columns and the tape's trainable operation parameters (observable
    parameters come after them), so the tape's Jacobian is the engine's times ``chain``.
    """

    wire_order: tuple
    slots: tuple
    chain: np.ndarray = field(compare=False)
    state_prep: bool = False  # the first operation prepares the initial state
    wire_map: dict = field(compare=False, default_factory=dict)
    engine_plans: dict = field(compare=False, default_factory=dict)  # fuse -> the engine's Plan
    n_params: int = 0  # operation parameters on the tape (observable parameters come after them)

    def engine_plan(self, circuit, broadcast: bool, *, fuse: bool):
        """The engine's :class:`~qhybrid.sim.plan.Plan` of ``circuit`` (this plan filled in):
        built once per ``fuse`` when nothing is broadcast (the engine's plan depends on the
        operations alone then); with broadcast parameters the engine builds its own per call,
        as which operations carry the batch may differ from call to call."""
        if broadcast:
            return None
        plan = self.engine_plans.get(fuse)
        if plan is None:
            from ..sim.fuse import build_plan  # the engine's (it imports torch): asked for on its path only

            plan = self.engine_plans[fuse] = build_plan(circuit.operations, circuit.n_wires, fuse=fuse)
        return plan

    @property
    def n_wires(self) -> int:
        return len(self.wire_order)

    def circuit(self, tape, measurements=()) -> tuple:
        """``(Circuit, broadcast)`` for ``tape``'s parameters (``broadcast``: some operation
        parameter has a batch axis, so results keep one)."""
        ops = tape.operations
        # plain floats pass as they are (the engine reads them as numbers, and evaluates a
        # layer's rotations of plain floats in one batched call); anything else once through
        # to_numpy (an array may carry a batch axis), a real 0-d one becoming a float (a numpy
        # float64, an element of a numpy parameter array, directly: ~1 us a parameter less)
        flat = [d if type(d) is float else float(d) if type(d) is np.float64 else _number(d)
                for op in ops for d in op.data]
        init = None
        if self.state_prep:
            init = to_numpy(ops[0].state_vector(wire_order=list(self.wire_order))).reshape(-1, 2**self.n_wires)
        out, broadcast = [], False
        for s in self.slots:
            if s.op_index >= 0:
                op = convert_op(ops[s.op_index], self.wire_map, s.trainable)
                broadcast = broadcast or np.ndim(op.params[0]) > _CORE_NDIM[op.name]
                out.append(op)
                continue
            params = []
            for src in s.sources:
                if len(src) == 1:
                    i, f = src[0]
                    v = flat[i] if f == 1 else f * flat[i]
                else:
                    v = sum(f * flat[i] for i, f in src)
                if type(v) is not float and not broadcast:
                    broadcast = np.ndim(v) > _CORE_NDIM.get(s.name, 0)
                params.append(v)
            out.append(Operation(s.name, s.wires, tuple(params), s.trainable, s.adjoint))
        return Circuit(self.n_wires, tuple(out), tuple(measurements), initial_state=init), broadcast

    def tape_jacobian(self, jac: np.ndarray) -> np.ndarray:
        """The engine's ``(M, C, B)`` Jacobian as the tape's ``(M, T, B)`` (T trainable operation
        parameters, in the tape's order)."""
        return np.einsum("mcb,ct->mtb", jac, self.chain)


def _number(d):
    """``d`` as numpy, a real 0-d value as a float."""
    a = to_numpy(d)
    return float(a) if a.ndim == 0 and a.dtype.kind == "f" else a


def structure_key(tape, wire_order) -> tuple:
    """What decides a tape's :class:`TapePlan`: each operation's name and wires (and a
    ``PauliRot``'s word), the trainable parameters, the wire order."""
    return tuple(map(_op_key, tape.operations)), tuple(tape.trainable_params), tuple(wire_order)


def _op_key(op) -> tuple:
    make = _KEYED.get(op.name)
    if make is not None:
        return make(op)
    return op.name, op_wire_labels(op)


def _evolution_key(op) -> tuple:
    h = op.hyperparameters
    return op.name, op.wires, h["n"], tuple(h["hamiltonian"].pauli_rep.items())


#: Operations whose structure includes hyperparameters (a PauliRot's word, a time evolution's
#: Hamiltonian: its coefficients are hyperparameters the plan bakes in).
_KEYED = {"PauliRot": lambda op: (op.name, op.wires, op.hyperparameters["pauli_word"]),
          "ApproxTimeEvolution": _evolution_key}


def make_plan(tape, wire_order) -> TapePlan:
    """The :class:`TapePlan` of ``tape`` on ``wire_order`` (see the module docstring)."""
    wire_map = {w: i for i, w in enumerate(wire_order)}
    trainable = {p: t for t, p in enumerate(sorted(tape.trainable_params))}
    slots, p, state_prep, n_op_params = [], 0, False, 0
    for k, op in enumerate(tape.operations):
        m = op.num_params
        tr = [j for j in range(m) if p + j in trainable]
        n_op_params += len(tr)
        if isinstance(op, StatePrepBase) and k == 0:
            state_prep = True
        elif op.name == "Identity":
            pass
        elif op.name == "Rot":
            w = (wire_map[op.wires[0]],)
            slots += [Slot(name, w, False, (((p + j, 1),),), (0,) if j in tr else ())
                      for j, name in enumerate(("RZ", "RY", "RZ"))]
        elif op.name == "ApproxTimeEvolution":  # its time is its last parameter
            t = (0,) if m - 1 in tr else ()
            slots += [Slot(name, tuple(wire_map[w] for w in ws), False, (((p + m - 1, f),),), t)
                      for name, ws, f in evolution_gates(op)] * op.hyperparameters["n"]
        else:
            nat = _native(op)
            if nat is None:
                slots.append(Slot("", (), False, (), tuple(tr), op_index=k))
            else:
                slots.append(Slot(nat[0], tuple(wire_map[w] for w in op.wires), nat[1],
                                  tuple(((p + j, 1),) for j in range(m)), tuple(tr)))
        p += m
    slots = _merge_zrotations(slots)
    columns = [s.sources[j] if s.op_index < 0 else () for s in slots for j in s.trainable]
    chain = np.zeros((len(columns), n_op_params))
    for c, src in enumerate(columns):
        for i, f in src:
            if i in trainable:
                chain[c, trainable[i]] += f
    return TapePlan(tuple(wire_order), tuple(slots), chain, state_prep, wire_map, n_params=p)


def _merge_zrotations(slots: list) -> list:
    """Each maximal run of Z-rotation slots as one rotation per distinct wire set, 1-qubit ones
    first, angles summed (the engine's :func:`~qhybrid.sim.zrot.zrotation_groups`, here once per
    tape structure, with each merged angle's tape parameters in its sources)."""
    out, run = [], []
    for s in slots + [None]:
        if s is not None and s.name in _ZROT and s.op_index < 0:
            run.append(s)
            continue
        if len(run) > 1:
            for wires, members in zrotation_groups([(r.wires, r.adjoint) for r in run]):
                src: dict = {}
                for i, sign in members:
                    for t, f in run[i].sources[0]:
                        src[t] = src.get(t, 0.0) + sign * f
                trainable = any(run[i].trainable for i, _ in members)
                out.append(Slot(ZROT_NAME.get(len(wires), "MultiRZ"), wires, False, (tuple(src.items()),),
                                (0,) if trainable else ()))
        else:
            out += run
        run = []
        if s is not None:
            out.append(s)
    return out


_PLAIN = (float, int, complex, np.number)


class PlanCache:
    """:class:`TapePlan` per :func:`structure_key`, and converted observables per Pauli sum (a
    Hamiltonian of hundreds of terms costs milliseconds to convert, a microsecond a term to
    look up); the ``max_entries`` most recent of each kept."""

    def __init__(self, *, max_entries: int = 64):
        self.max_entries = max_entries
        self._plans: OrderedDict = OrderedDict()
        self._observables: OrderedDict = OrderedDict()

    def plan(self, tape, wire_order) -> TapePlan:
        """The plan of ``tape`` on ``wire_order``, made on first sight of its structure."""
        return self._get(self._plans, structure_key(tape, wire_order), lambda: make_plan(tape, wire_order))

    def observable(self, obs, wire_order, wire_map):
        """``convert_observable(obs, wire_map)``, kept when ``obs`` is a Pauli sum with plain
        coefficients (trainable ones change at every call)."""
        rep = obs.pauli_rep
        if rep is None or not all(isinstance(c, _PLAIN) for c in rep.values()):
            return convert_observable(obs, wire_map)
        key = (tuple(wire_order), tuple(rep.items()))
        return self._get(self._observables, key, lambda: convert_observable(obs, wire_map))

    def measurements(self, tape, plan: TapePlan) -> tuple:
        """The engine measurements of ``tape`` (expval / var / probs; ``None`` for those the
        device finishes with PennyLane's ``process_state``)."""
        out = []
        for mp in tape.measurements:
            kind = type(mp).__name__
            if kind in ("ExpectationMP", "VarianceMP") and mp.obs is not None:
                out.append(Measurement("expval" if kind == "ExpectationMP" else "var",
                                       self.observable(mp.obs, plan.wire_order, plan.wire_map)))
            elif kind == "ProbabilityMP" and mp.obs is None and mp.mv is None:
                out.append(Measurement("probs", wires=tuple(plan.wire_map[w] for w in (mp.wires or plan.wire_order))))
            else:
                out.append(None)
        return tuple(out)

    def _get(self, store: OrderedDict, key, make):
        value = store.get(key)
        if value is None:
            value = store[key] = make()
            if len(store) > self.max_entries:
                store.popitem(last=False)
        else:
            store.move_to_end(key)
        return value

    def __len__(self) -> int:
        return len(self._plans)
