"""PennyLane operations and observables -> the engine's (a whole tape: :mod:`.plan`).

Trusts that the device's preprocess has run: every operation is in the gate
table, an ``Adjoint`` of one, a state preparation, or has a matrix.
"""
from __future__ import annotations

import numpy as np
import pennylane as qml
from pennylane.ops.op_math import Controlled

from ..sim.circuit import DenseTerm, Observable, Operation, PauliTerm
from ..sim.gates import GATES


def to_numpy(x):
    """A plain numpy value from any interface's tensor (plain numbers and arrays without the
    interface dispatch, which costs ~10 us a call: thousands per Hamiltonian)."""
    if isinstance(x, (np.ndarray, float, int, complex, np.number)):
        return np.asarray(x)
    return np.asarray(qml.math.unwrap(qml.math.toarray(x)))


_PAULIROT = {"X": "RX", "Y": "RY", "Z": "RZ", "XX": "IsingXX", "YY": "IsingYY", "ZZ": "IsingZZ"}


def pauli_word_gate(word: str):
    """The table gate ``G`` with ``G(theta) = exp(-i theta/2 P)`` for the Pauli word ``P`` (a string
    such as ``"ZZ"``, no identities), or None."""
    if not word or "I" in word:
        return None
    if word in _PAULIROT:
        return _PAULIROT[word]
    return "MultiRZ" if set(word) == {"Z"} else None


def _pauli_rot_name(op):
    """The table gate equal to a PauliRot (same angle), or None."""
    return pauli_word_gate(op.hyperparameters["pauli_word"])


def _native(op):
    """(name, adjoint flag) when the table runs ``op`` directly, else None."""
    if op.name in GATES:
        return op.name, False
    if op.name == "PauliRot" and _pauli_rot_name(op):
        return _pauli_rot_name(op), False
    if isinstance(op, qml.ops.op_math.Adjoint) and op.base.name in GATES:
        return op.base.name, True
    return None


def convert_op(op, wire_map, trainable=()) -> Operation:
    """One PennyLane operation as an engine Operation (a unitary when not in the table)."""
    wires = tuple(wire_map[w] for w in op.wires)
    nat = _native(op)
    if nat is not None:
        base = op.base if nat[1] else op
        params = tuple(to_numpy(p) for p in base.data)
        return Operation(nat[0], wires, params, tuple(trainable), nat[1])
    m = to_numpy(qml.matrix(op, wire_order=op.wires))
    d = np.diagonal(m, axis1=-2, axis2=-1)
    if np.allclose(m, np.einsum("...i,ij->...ij", d, np.eye(m.shape[-1]))):
        return Operation("DiagonalQubitUnitary", wires, (d,))
    return Operation("QubitUnitary", wires, (m,))


def rot_as_rotations(op, wire_map, trainable=()) -> list:
    """``Rot(phi, theta, omega)`` as ``RZ(phi)``, ``RY(theta)``, ``RZ(omega)``: its parameters in
    the tape's order, each trainable on its own (adjoint differentiation wants one generator per
    gate; doing this here spares PennyLane's decomposition on every call, and the engine fuses
    the three back into one 2x2)."""
    w = (wire_map[op.wires[0]],)
    return [Operation(name, w, (to_numpy(p),), (0,) if j in trainable else ())
            for j, (name, p) in enumerate(zip(("RZ", "RY", "RZ"), op.data))]


def convert_observable(obs, wire_map) -> Observable:
    """Pauli sums as Pauli terms (no matrices); anything else as dense terms."""
    paulis, dense = [], []
    try:
        terms = [(1.0, obs)] if obs.pauli_rep is not None else list(zip(*obs.terms()))
    except Exception:  # noqa: BLE001  (no terms(): a single operator)
        terms = [(1.0, obs)]
    for c, o in terms:
        c = complex(to_numpy(c))
        rep = o.pauli_rep
        if rep is not None:
            for word, cw in rep.items():
                paulis.append(PauliTerm(c * complex(to_numpy(cw)),
                                        tuple((wire_map[w], p) for w, p in word.items())))
        else:
            m = to_numpy(qml.matrix(o, wire_order=o.wires))
            dense.append(DenseTerm(c.real, tuple(wire_map[w] for w in o.wires), m))
    return Observable(tuple(paulis), tuple(dense))


def op_wire_labels(op) -> tuple:
    """``op.wires.labels``, a tuple (hashed and compared in C, unlike ``Wires``); a controlled
    operation's from its parts (its ``wires`` is built anew at each access, ~20 us a CNOT)."""
    controlled = _CONTROLLED.get(type(op))
    if controlled is None:
        controlled = _CONTROLLED[type(op)] = isinstance(op, Controlled)
    if controlled:
        return op.hyperparameters["control_wires"].labels + op.base.wires.labels
    return op.wires.labels


_CONTROLLED: dict = {}  # operation type -> whether it is a Controlled (isinstance costs microseconds)


def evolution_gates(op):
    """The table gates of an ``ApproxTimeEvolution`` (``exp(-i t H)`` in ``n`` Trotter steps,
    one rotation ``exp(-i t c/n P)`` per Pauli word ``P`` of ``H``): ``[(gate, wires, 2 c / n)]``
    per step, or None when a word has no table gate."""
    h, n = op.hyperparameters["hamiltonian"], op.hyperparameters["n"]
    out = []
    for word, c in h.pauli_rep.items():
        if not len(word):
            continue  # the identity: a global phase
        name = pauli_word_gate("".join(word.values()))
        if name is None:
            return None
        out.append((name, tuple(word.keys()), 2.0 * float(np.real(c)) / n))
    return out
