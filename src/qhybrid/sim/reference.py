"""A plain, obviously-correct state-vector simulator: the second oracle.

Every operation is applied as its dense matrix ``qml.matrix(op)`` by a
tensordot on a numpy state of shape ``(2,) * n`` (wire 0 is the most
significant bit, as in PennyLane). Broadcast parameters are handled by
simulating each batch entry on its own. Nothing here is fast, fused or
clever; that is the point: the engine's fused paths are checked against it
(and against ``default.qubit``).

Only analytic results (``state``, ``probs``, ``expval``, ``var``) are
supported. The functions trust their inputs.

Example:
    >>> tape = qml.tape.QuantumScript([qml.Hadamard(0), qml.CNOT([0, 1])],
    ...                               [qml.probs(wires=[0, 1])])
    >>> simulate(tape)
    array([0.5, 0. , 0. , 0.5])
"""
from __future__ import annotations

import numpy as np
import pennylane as qml
from pennylane import measurements as qmeas


def apply_matrix(state: np.ndarray, matrix: np.ndarray, axes: list[int]) -> np.ndarray:
    """Apply a ``2**k x 2**k`` matrix to the tensor axes ``axes`` of a ``(2,)*n`` state.

    The first entry of ``axes`` is the matrix's most significant bit.
    """
    k = len(axes)
    if k == 0:  # a global phase: a 1x1 matrix
        return state * matrix.reshape(())
    tensor = np.asarray(matrix).reshape((2,) * (2 * k))
    out = np.tensordot(tensor, state, axes=(list(range(k, 2 * k)), axes))
    # tensordot puts the k new axes first; move them back where they belong
    return np.moveaxis(out, list(range(k)), axes)


def _matrix(op, index: int | None, dtype) -> np.ndarray:
    mat = np.asarray(qml.matrix(op), dtype=dtype)
    if op.batch_size is not None:
        mat = mat[index]
    return mat


def _initial_state(ops, wire_order, dtype) -> tuple[np.ndarray, list]:
    """|0...0>, or the vector of a leading StatePrep / BasisState."""
    n = len(wire_order)
    if ops and isinstance(ops[0], qml.operation.StatePrepBase):
        vec = np.asarray(ops[0].state_vector(wire_order=wire_order), dtype=dtype)
        return vec.reshape((2,) * n) if vec.ndim == n else vec, list(ops[1:])
    state = np.zeros((2,) * n, dtype=dtype)
    state[(0,) * n] = 1.0
    return state, list(ops)


def final_state(tape, *, wire_order=None, dtype=np.complex128) -> np.ndarray:
    """The state after all of ``tape``'s operations.

    Args:
        tape: a ``QuantumScript`` (only its operations are used).
        wire_order: the wire labels, most significant first (default ``tape.wires``).
        dtype: ``np.complex128`` or ``np.complex64``.

    Returns:
        ``(2**n,)``, or ``(B, 2**n)`` when the tape is broadcast.
    """
    wire_order = qml.wires.Wires(wire_order if wire_order is not None else tape.wires)
    n = len(wire_order)
    batch = tape.batch_size
    states = []
    for b in range(batch or 1):
        state, ops = _initial_state(tape.operations, wire_order, dtype)
        if state.ndim == n + 1:  # a broadcast StatePrep
            state = state[b]
        for op in ops:
            axes = [wire_order.index(w) for w in op.wires]
            state = apply_matrix(state, _matrix(op, b, dtype), axes)
        states.append(state.reshape(-1))
    return np.stack(states) if batch is not None else states[0]


def probabilities(state: np.ndarray, wires, wire_order) -> np.ndarray:
    """Marginal probabilities of ``wires`` (in that order) for one ``(2**n,)`` state."""
    n = len(wire_order)
    probs = (np.abs(state) ** 2).reshape((2,) * n)
    axes = [wire_order.index(w) for w in wires]
    rest = tuple(i for i in range(n) if i not in axes)
    marginal = probs.sum(axis=rest)
    # after summing, the kept axes are in increasing order; permute to `wires`' order
    order = np.argsort(np.argsort(axes))
    return np.transpose(marginal, order).reshape(-1)


def apply_observable(state: np.ndarray, obs, wire_order) -> np.ndarray:
    """``obs |state>`` for one ``(2**n,)`` state, through the observable's own matrix."""
    n = len(wire_order)
    matrix = qml.matrix(obs, wire_order=obs.wires)
    axes = [wire_order.index(w) for w in obs.wires]
    return apply_matrix(state.reshape((2,) * n), matrix, axes).reshape(-1)


def measure(state: np.ndarray, mp, wire_order):
    """One measurement of one ``(2**n,)`` state: state, probs, expval or var."""
    if isinstance(mp, qmeas.StateMP) and not mp.wires:
        return state
    if isinstance(mp, qmeas.ProbabilityMP):
        if mp.obs is not None:
            raise NotImplementedError("reference: probs(op=...) is not supported")
        return probabilities(state, mp.wires or wire_order, wire_order)
    if isinstance(mp, (qmeas.ExpectationMP, qmeas.VarianceMP)):
        phi = apply_observable(state, mp.obs, wire_order)
        mean = np.vdot(state, phi).real
        if isinstance(mp, qmeas.ExpectationMP):
            return mean
        # <O^2> = ||O psi||^2 for a Hermitian O
        return np.vdot(phi, phi).real - mean**2
    raise NotImplementedError(f"reference: {type(mp).__name__} is not supported; "
                              "use state, probs, expval or var")


def simulate(tape, *, wire_order=None, dtype=np.complex128):
    """Run ``tape`` analytically.

    Args:
        tape: a ``QuantumScript`` of unitary operations and analytic measurements.
        wire_order: the wire labels, most significant first (default ``tape.wires``).
        dtype: ``np.complex128`` or ``np.complex64``.

    Returns:
        One result per measurement (a tuple when there are several, as PennyLane
        returns them); broadcast tapes give each result a leading batch axis.

    Raises:
        NotImplementedError: for sampled measurements or ``probs(op=...)``.
    """
    wire_order = qml.wires.Wires(wire_order if wire_order is not None else tape.wires)
    states = final_state(tape, wire_order=wire_order, dtype=dtype)
    batched = tape.batch_size is not None
    results = []
    for mp in tape.measurements:
        if batched:
            results.append(np.stack([np.asarray(measure(s, mp, wire_order)) for s in states]))
        else:
            results.append(np.asarray(measure(states, mp, wire_order)))
    return tuple(results) if len(results) > 1 else results[0]
