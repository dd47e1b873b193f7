"""The small-circuit engine: numpy alone (no torch, no numba), for circuits whose run costs less
than loading the engine.

Below a dozen or so wires a whole circuit's simulation takes milliseconds, and what a fresh
process waits for is the engine's start-up (torch's import, numba's, its cached kernels). This
module runs the engine's IR (:mod:`.circuit`) with the same results as :mod:`.simulate`,
:mod:`.measure` and :mod:`.adjoint`, on numpy ``(B, 2**n)`` states of complex128 or complex64:
each gate its ``(P, d, d)`` matrix from the gate table (``P`` 1 or the batch ``B``) applied over its
wires entry by entry (its zeros skipped), a diagonal gate by one multiply, a Pauli word as an index permutation
and a sign (:func:`~.circuit.pauli_masks`). The adjoint sweep keeps the ket and the bras in one
``(1 + M, B, 2**n)`` array, so each gate is undone on all of them in one call. An unbatched forward pass goes through
:mod:`.smallforward` (layers of one-qubit gates by Kronecker chunks, runs of CNOTs by one gather);
both merge each wire's run of one-qubit gates by :func:`~.smallforward.one_qubit_runs`. The
plugin chooses this path below :data:`SMALL_MAX_WIRES` only. Trusts its inputs.

Example:
    >>> from qhybrid.sim.circuit import Circuit, Measurement, Observable, Operation
    >>> c = Circuit(1, (Operation("RX", (0,), (0.3,), trainable=(0,)),),
    ...             (Measurement("expval", Observable.pauli({"Z": 1.0})),))
    >>> values, jac = adjoint_jacobian(c, return_values=True)
    >>> round(float(values[0, 0]), 6), round(float(jac[0, 0, 0]), 6)
    (0.955336, -0.29552)
"""
from __future__ import annotations

import functools

import numpy as np

from ..errors import OperationError
from .circuit import split_terms
from .gates import GATES, _matrix_np, _params, adjoint_columns, gate_generator
from .smallforward import forward, one_qubit_runs

#: The plugin runs circuits of at most this many wires here (``qhybrid.cpu``'s start-up beats
#: lightning.qubit's with it; larger circuits go to the fused engine, whose kernels win there).
SMALL_MAX_WIRES = 14


def _apply(states, array, wires, n: int, *, diagonal: bool):
    """``array`` (a ``(P, d, d)`` matrix, or a ``(P, d)`` diagonal) on ``wires`` of every row of
    ``states`` ``(R, B, 2**n)``; a new array."""
    R, B = states.shape[:2]
    array = array.astype(states.dtype, copy=False)
    k = len(wires)
    if k == 0:  # a global phase
        return states * array.reshape(1, -1, 1)
    wires = tuple(wires)
    if diagonal:
        d = array.reshape((-1,) + (2,) * k).transpose([0] + [1 + i for i in np.argsort(wires)])
        shape = (1, d.shape[0]) + tuple(2 if w in wires else 1 for w in range(n))
        return (states.reshape((R, B) + (2,) * n) * d.reshape(shape)).reshape(R, B, -1)
    axes, rows = _layout(wires, n)
    shape = (R, B) + axes
    v = states.reshape(shape)
    if k == 1 and array.shape[0] == 1:  # the common case, with Python scalars: 6 numpy calls
        return _one_qubit(v, array[0]).reshape(R, B, -1)
    nz = np.any(array != 0, axis=0)
    # entry by entry, the zeros skipped (a CNOT is four copies): no BLAS call, whose threads
    # cost a hundred times the work on a busy machine at these sizes; each output row's first
    # term written in place (no zero fill), the others through one scratch block
    entries = [[] for _ in rows]
    one = array.shape[0] == 1  # one matrix for the batch: Python scalars (cheaper than (1, 1, ...) arrays)
    for i, j in zip(*np.nonzero(nz)):
        entries[i].append((j, complex(array[0, i, j]) if one else array[:, i, j].reshape((1, -1) + (1,) * (k + 1))))
    out = np.empty(shape, dtype=states.dtype) if all(entries) else np.zeros(shape, dtype=states.dtype)
    scratch = None
    for i, terms in enumerate(entries):
        for t, (j, c) in enumerate(terms):
            src, dst = v[rows[j]], out[rows[i]]
            ones = one and c == 1
            if t == 0:
                if ones:
                    dst[...] = src
                else:
                    np.multiply(src, c, out=dst)
            elif ones:
                dst += src
            else:
                if scratch is None:
                    scratch = np.empty(src.shape, dtype=states.dtype)
                np.multiply(src, c, out=scratch)
                dst += scratch
    return out.reshape(R, B, -1)


def _one_qubit(v, m):
    """The 2x2 matrix ``m`` on the gate axis (axis 3) of ``v`` shaped by :func:`_layout`."""
    (a, b), (c, d) = m.tolist()
    v0, v1 = v[:, :, :, 0], v[:, :, :, 1]
    out = np.empty_like(v)
    o0, o1 = out[:, :, :, 0], out[:, :, :, 1]
    scratch = np.multiply(v1, b)
    np.multiply(v0, a, out=o0)
    o0 += scratch
    np.multiply(v1, d, out=scratch)
    np.multiply(v0, c, out=o1)
    o1 += scratch
    return out


@functools.lru_cache(maxsize=512)
def _layout(wires: tuple, n: int):
    """How :func:`_apply` views a state for a gate on ``wires``: the axes after ``(R, B)`` (a
    pair ``(2**gap, 2)`` per gate wire in ascending order, then the rest; no copy, no transpose)
    and the index of each basis row ``i`` of the gate (``wires[0]`` its most significant bit)."""
    order = sorted(wires)
    axes, prev = [], 0
    for w in order:
        axes += [2**(w - prev), 2]
        prev = w + 1
    axes.append(2 ** (n - prev))
    k = len(wires)
    rows = []
    for i in range(2**k):
        bits = {w: (i >> (k - 1 - p)) & 1 for p, w in enumerate(wires)}
        idx = [slice(None), slice(None)]
        for w in order:
            idx += [slice(None), bits[w]]
        rows.append(tuple(idx + [slice(None)]))
    return tuple(axes), tuple(rows)


def _operator(op, *, inverse: bool = False):
    """``(array, diagonal)`` of an IR operation (its inverse on request)."""
    adjoint = op.adjoint != inverse
    if not op.params:  # CNOT, H, ...: made once
        return _fixed(op.name, len(op.wires), adjoint)
    gate = GATES[op.name]
    if gate.matrix is None:
        d = gate.diagonal(_params(op.params), len(op.wires))
        return (d.conj() if adjoint else d), True
    return _matrix_np(op.name, _params(op.params), len(op.wires), adjoint), False


@functools.lru_cache(maxsize=256)
def _fixed(name: str, k: int, adjoint: bool):
    gate = GATES[name]
    if gate.matrix is None:
        d = gate.diagonal(_params(()), k)
        array, diagonal = (d.conj() if adjoint else d), True
    else:
        array, diagonal = _matrix_np(name, _params(()), k, adjoint), False
    return array, diagonal  # (shared between calls: never written)


def apply_operation(states, op, n: int, *, inverse: bool = False):
    """``states`` ``(R, B, 2**n)`` after the IR operation ``op`` (its inverse on request)."""
    array, diagonal = _operator(op, inverse=inverse)
    return _apply(states, array, op.wires, n, diagonal=diagonal)


def final_state(circuit, *, dtype=np.complex128) -> np.ndarray:
    """The state after ``circuit``'s operations, ``(B, 2**n)`` of ``dtype``."""
    n, B = circuit.n_wires, circuit.batch_size
    if circuit.initial_state is not None:
        init = np.asarray(circuit.initial_state).reshape(-1, 2**n)
        state = np.array(np.broadcast_to(init, (B, 2**n)), dtype=dtype)
    else:
        state = np.zeros((B, 2**n), dtype=dtype)
        state[:, 0] = 1
    if B == 1:  # layers of one-qubit gates and runs of CNOTs in few numpy calls
        return forward(state.reshape(-1), circuit.operations, n, _operator, _apply).reshape(1, -1)
    states = state[None]
    for array, wires, diagonal in _merged(circuit.operations):
        states = _apply(states, array, wires, n, diagonal=diagonal)
    return states[0]


def _merged(ops):
    """``(array, wires, diagonal)`` per step of a batch's forward pass over ``ops``: each wire's
    run of one-qubit gates multiplied into one (:func:`~.smallforward.one_qubit_runs` on numpy
    entries), applied before the next gate on its wire or at the end (a layer of RX, RY, RZ is
    one pass per wire, not three; the adjoint sweep undoes gates one at a time and does not use
    this)."""
    for op, pending in one_qubit_runs(ops, _operator, _product):
        for w in (list(pending) if op is None else op.wires):
            if w in pending:
                array, diagonal = pending.pop(w)
                yield array, (w,), diagonal
        if op is not None:
            array, diagonal = _operator(op)
            yield array, op.wires, diagonal


def _product(later, earlier):
    """``later @ earlier`` of two one-qubit ``(array, diagonal)`` entries (batch axes broadcast);
    diagonal when both are."""
    (a, da), (b, db) = later, earlier
    if da and db:
        return a * b, True
    a = a[:, :, None] * np.eye(2) if da else a  # (P, 2) diagonal -> (P, 2, 2)
    b = b[:, :, None] * np.eye(2) if db else b
    return (a[:, :, :, None] * b[:, None, :, :]).sum(axis=2), False  # no BLAS (see _apply)


def _signs(masked, dtype) -> np.ndarray:
    """``(-1)^popcount(masked)`` as ``dtype`` (``masked`` int64 indices and-ed with a mask)."""
    return 1 - 2 * (np.bitwise_count(masked) & 1).astype(dtype)


def _z_diagonal(z_terms, n: int) -> np.ndarray:
    idx = np.arange(2**n, dtype=np.int64)
    out = np.zeros(2**n)
    for c, z in z_terms:
        out += c * _signs(idx & z, np.float64)
    return out


def apply_observable(states, obs, n: int):
    """``O`` applied to every row of ``states`` ``(R, B, 2**n)``: a new array."""
    zt, other = split_terms(obs, n)
    out = states * _z_diagonal(zt, n).astype(states.real.dtype) if zt else np.zeros_like(states)
    if other:
        idx = np.arange(2**n, dtype=np.int64)
        for c, x, z in other:
            j = idx ^ x  # (P psi)[i] = c (-1)^{popcount((i ^ x) & z)} psi[i ^ x]
            out += (c * _signs(j & z, np.float64)).astype(states.dtype) * states[..., j]
    for t in obs.dense:
        out += t.coeff * _apply(states, np.asarray(t.matrix)[None], t.wires, n, diagonal=False)
    return out


def _overlap_real(a, b) -> np.ndarray:
    """``Re <a|b>`` along the last axis, float64."""
    return (np.sum(a.real * b.real, axis=-1, dtype=np.float64)
            + np.sum(a.imag * b.imag, axis=-1, dtype=np.float64))


def expval(state, obs, n: int) -> np.ndarray:
    """``<psi|O|psi>`` per row of ``state`` ``(B, 2**n)``: ``(B,)`` float64."""
    return _overlap_real(state, apply_observable(state[None], obs, n)[0])


def probs(state, wires, n: int) -> np.ndarray:
    """Marginal probabilities of ``wires`` (in that order), ``(B, 2**k)`` float."""
    B = state.shape[0]
    p = (state.real**2 + state.imag**2).reshape((B,) + (2,) * n)
    wires = list(wires)
    rest = tuple(1 + w for w in range(n) if w not in wires)
    if rest:
        p = p.sum(axis=rest)
    if not wires:
        return p.reshape(B, 1)
    kept = sorted(wires)
    return p.transpose([0] + [1 + kept.index(w) for w in wires]).reshape(B, -1)


def measure(state, m, n: int) -> np.ndarray:
    """One :class:`~.circuit.Measurement` on ``state`` (as :func:`qhybrid.sim.measure.measure`)."""
    if m.kind == "expval":
        return expval(state, m.obs, n)
    if m.kind == "var":
        opsi = apply_observable(state[None], m.obs, n)[0]
        ev = _overlap_real(state, opsi)
        return _overlap_real(opsi, opsi) - ev**2
    if m.kind == "probs":
        return probs(state, m.wires if m.wires else range(n), n)
    if m.kind == "state":
        return state.copy()
    raise ValueError(f"unknown measurement kind {m.kind!r}; valid: expval, var, probs, state")


def adjoint_jacobian(circuit, *, dtype=np.complex128, return_values: bool = False, state=None):
    """Jacobian of ``circuit``'s expval measurements w.r.t. its trainable parameters, by one
    backward sweep (as :func:`qhybrid.sim.adjoint.adjoint_jacobian`).

    Args:
        circuit: a :class:`~.circuit.Circuit` whose measurements are all ``expval``.
        dtype: the states' complex dtype.
        return_values: also return the expectation values.
        state: the circuit's final state ``(B, 2**n)`` when the caller has it (forward skipped).

    Returns:
        ``(M, T, B)`` float64; with ``return_values`` the pair ``(values (M, B), jacobian)``.

    Raises:
        OperationError: a trainable multi-parameter gate, or a non-expval measurement.
    """
    ops, n = tuple(circuit.operations), circuit.n_wires
    for m in circuit.measurements:
        if m.kind != "expval":
            raise OperationError(f"adjoint differentiation supports expval only, not {m.kind!r}")
    cols, T = adjoint_columns(ops)
    ket = final_state(circuit, dtype=dtype) if state is None else np.asarray(state)
    M, B = len(circuit.measurements), ket.shape[0]
    states = np.empty((1 + M, B, ket.shape[1]), dtype=ket.dtype)
    states[0] = ket
    for m, meas in enumerate(circuit.measurements):
        states[1 + m] = apply_observable(ket[None], meas.obs, n)[0]
    values = _overlap_real(ket[None], states[1:])
    jac = np.zeros((M, T, B))
    first = next((k for k, op in enumerate(ops) if op.trainable), len(ops))
    for k in range(len(ops) - 1, first - 1, -1):
        op = ops[k]
        if op.trainable and M:
            gen = gate_generator(op.name, len(op.wires), op.adjoint)
            g_ket = _apply(states[:1], gen[None], op.wires, n, diagonal=gen.ndim == 1)
            ov = np.sum(states[1:].conj() * g_ket, axis=-1)  # <bra_m|G|ket>, (M, B)
            jac[:, cols[k], :] = -2.0 * ov.imag
        if k > first:
            states = apply_operation(states, op, n, inverse=True)
    return (values, jac) if return_values else jac
