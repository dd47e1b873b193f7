"""The forward pass of :mod:`.small`: one-qubit runs merged; an unbatched circuit in few numpy calls.

:func:`one_qubit_runs` is the walk both forward passes share: it multiplies each wire's run of
one-qubit gates into one matrix, on ``(P, 2, 2)`` arrays for a batch (:mod:`.small`) or on
Python numbers for one row (:func:`forward`). At 4-14 wires a forward call costs numpy's
per-call overhead (a few microseconds a call, a dozen calls a gate), not arithmetic. For a
circuit of batch size 1 :func:`forward`:

- multiplies each wire's run of one-qubit gates into one 2x2 matrix with Python complex numbers
  (the gate table's scalar forms of RX, RY, RZ, PhaseShift, U1 and Rot: no numpy call per gate);
- applies the pending one-qubit matrices of all wires together as one layer when a gate on more
  wires touches one of them: the wires in chunks of :func:`chunk_size`, each chunk's Kronecker
  product applied by one matrix product whose result is laid out with the chunk's axes last
  (``state.reshape(G, -1).T @ K.T``), so after every chunk the wires are back in order:
  ``ceil(n / chunk)`` products instead of six numpy calls a wire;
- gathers a run of permutation gates (CNOT, SWAP, Toffoli, CSWAP, ...) through one index table
  composed once per wire count and run (cached): a CNOT ring is one ``take``.

Pending one-qubit matrices commute with the gates on other wires, so they wait until a gate on
their wire comes; a waiting run of permutation gates goes first when they are applied (every
gate of the run touching a pending wire came before that wire's matrix). Other gates are
applied by :mod:`.small`'s functions (passed in, so this module imports none of it).
"""
from __future__ import annotations

import functools

import numpy as np

from .gates import GATES

#: Fewer pending wires than this are applied one by one (a layer visits every wire).
LAYER_MIN_WIRES = 3


def chunk_size(n: int) -> int:
    """Wires per Kronecker chunk: 3 (an 8x8 matrix), fewer from 14 wires so that each product's
    ``m*n*k`` stays at most ``2**16``, below OpenBLAS's threading threshold (threads at these
    sizes cost a hundred times the work on a busy machine)."""
    return max(1, min(3, 16 - n))


#: name -> (the gate table's scalar form, whether it gives a diagonal), for the gates that have one.
_SCALAR = {name: (g.scalar, g.is_diagonal) for name, g in GATES.items() if g.scalar is not None}
_SCALARS = (float, int, np.floating, np.integer)


def one_qubit_runs(ops, matrix, times):
    """The walk over ``ops`` that multiplies each wire's run of one-qubit gates into one, for
    both forward passes of :mod:`.small`: a batch's on numpy arrays, one row's (:func:`forward`)
    on Python numbers.

    Yields ``(op, pending)`` for every operation on more wires (or none), in order, then
    ``(None, pending)``: ``pending`` maps a wire to the product (``times(later, earlier)``) of the
    ``matrix(op)`` of its one-qubit gates not applied yet. A one-qubit gate commutes with the
    gates off its wire, so the caller applies and removes (pops, clears) at least the entries on
    ``op``'s wires before ``op``, and the rest at the end.
    """
    pending = {}
    for op in ops:
        if len(op.wires) == 1:
            w = op.wires[0]
            m = matrix(op)
            pending[w] = m if w not in pending else times(m, pending[w])
        else:
            yield op, pending
    yield None, pending


def scalar_matrix(operator):
    """``matrix(op)``: ``(a, b, c, d)`` of a one-qubit IR operation's matrix ``[[a, b], [c, d]]``
    as Python numbers, from the gate table's scalar form when the gate has one and its parameters
    are plain numbers, else from ``operator(op)`` (``(array, diagonal)``, batch axis of 1)."""
    def matrix(op) -> tuple:
        form = _SCALAR.get(op.name)
        args = None if form is None else [float(p) for p in op.params if isinstance(p, _SCALARS)]
        if args is not None and len(args) == len(op.params):
            f, diagonal = form
            entries = f(*args)
            a, b, c, d = (entries[0], 0j, 0j, entries[1]) if diagonal else entries
            return (a.conjugate(), c.conjugate(), b.conjugate(), d.conjugate()) if op.adjoint else (a, b, c, d)
        array, diagonal = operator(op)
        if diagonal:
            d0, d1 = array.reshape(-1).tolist()
            return (d0, 0j, 0j, d1)
        (a, b), (c, d) = array.reshape(2, 2).tolist()
        return (a, b, c, d)

    return matrix


def _times(m, e):
    """``m @ e`` of two ``(a, b, c, d)`` matrices."""
    a, b, c, d = m
    p, q, r, s = e
    return (a * p + b * r, a * q + b * s, c * p + d * r, c * q + d * s)


def forward(state, ops, n: int, operator, apply) -> np.ndarray:
    """``state`` ``(2**n,)`` after ``ops`` (an unbatched circuit's operations); ``operator(op)``
    and ``apply(states (1, 1, 2**n), array, wires, n, diagonal=)`` are :mod:`.small`'s."""
    run = []  # the waiting permutation gates
    for op, pending in one_qubit_runs(ops, scalar_matrix(operator), _times):
        if op is None:
            break
        wires = op.wires
        cols = _permutation(op, operator) if not op.params else None
        if cols is not None and not any(w in pending for w in wires):
            run.append((cols, tuple(wires)))
            continue
        state = _flush(state, pending, run, n, apply)
        run = []
        if cols is not None:
            run.append((cols, tuple(wires)))
        else:
            array, diagonal = operator(op)
            state = apply(state.reshape(1, 1, -1), array, wires, n, diagonal=diagonal).reshape(-1)
    return _flush(state, pending, run, n, apply)


def _flush(state, pending, run, n: int, apply):
    """The waiting permutation run, then the pending one-qubit matrices (``pending`` emptied)."""
    if run:
        state = state[_gather_index(n, tuple(run))]
    if len(pending) >= LAYER_MIN_WIRES:
        state = _layer(state, pending, n)
    else:
        for w, (a, b, c, d) in pending.items():
            array = np.array([[[a, b], [c, d]]])
            state = apply(state.reshape(1, 1, -1), array, (w,), n, diagonal=False).reshape(-1)
    pending.clear()
    return state


def _layer(state, pending, n: int):
    """Every wire's pending matrix (identity where none) by chunked Kronecker products."""
    g, dtype = chunk_size(n), state.dtype
    eye = (1 + 0j, 0j, 0j, 1 + 0j)
    for c0 in range(0, n, g):
        chunk = [pending.get(w, eye) for w in range(c0, min(n, c0 + g))]
        if all(m is eye for m in chunk):
            state = np.ascontiguousarray(state.reshape(2 ** len(chunk), -1).T)
            continue
        k = np.array(chunk[0], dtype=dtype).reshape(2, 2)
        for m in chunk[1:]:
            d = k.shape[0]
            k = (k[:, None, :, None] * np.array(m, dtype=dtype).reshape(1, 2, 1, 2)).reshape(2 * d, 2 * d)
        state = state.reshape(k.shape[0], -1).T @ k.T  # (rest, G): the chunk's axes now last
    return state.reshape(-1)


_PERMUTATIONS: dict = {}


def _permutation(op, operator):
    """The source column of each row of a parameterless gate's matrix when it is a permutation
    of ones (CNOT, SWAP, Toffoli, ...), else None; worked out once per gate."""
    key = (op.name, len(op.wires), op.adjoint)
    if key not in _PERMUTATIONS:
        array, diagonal = operator(op)
        m = np.asarray(array)[0]
        ok = not diagonal and np.array_equal(m, m.real.round()) and \
            np.all((m == 0) | (m == 1)) and np.all(m.sum(axis=0) == 1) and np.all(m.sum(axis=1) == 1)
        _PERMUTATIONS[key] = tuple(int(j) for j in np.argmax(m.real, axis=1)) if ok else None
    return _PERMUTATIONS[key]


@functools.lru_cache(maxsize=64)
def _gather_index(n: int, run: tuple) -> np.ndarray:
    """``idx`` with ``state[idx]`` the state after the permutation gates ``run`` (``(cols,
    wires)`` each; wire 0 the most significant bit, ``wires[0]`` the gate row's)."""
    x = np.arange(2**n, dtype=np.int64)
    idx = x
    for cols, wires in run:
        k = len(wires)
        shifts = [n - 1 - w for w in wires]
        row = sum(((x >> s) & 1) << (k - 1 - p) for p, s in enumerate(shifts))
        col = np.asarray(cols, dtype=np.int64)[row]
        mask = sum(1 << s for s in shifts)
        src = (x & ~mask) | sum(((col >> (k - 1 - p)) & 1) << s for p, s in enumerate(shifts))
        idx = idx[src]  # this gate after the earlier ones: new[x] = earlier[src[x]]
    idx.flags.writeable = False
    return idx
