"""The forward pass of :mod:`.small` for an unbatched circuit, in few numpy calls.

At 4-14 wires a forward call costs numpy's per-call overhead (a few microseconds a call, a
dozen calls a gate), not arithmetic. For a circuit of batch size 1 this module:

- multiplies each wire's run of one-qubit gates into one 2x2 matrix with Python complex numbers
  (RX, RY, RZ, PhaseShift and Rot written out; no numpy call per gate);
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

import cmath
import functools
import math

import numpy as np

#: Fewer pending wires than this are applied one by one (a layer visits every wire).
LAYER_MIN_WIRES = 3


def chunk_size(n: int) -> int:
    """Wires per Kronecker chunk: 3 (an 8x8 matrix), fewer from 14 wires so that each product's
    ``m*n*k`` stays at most ``2**16``, below OpenBLAS's threading threshold (threads at these
    sizes cost a hundred times the work on a busy machine)."""
    return max(1, min(3, 16 - n))


def _rx(t):
    c, s = math.cos(t / 2), math.sin(t / 2)
    return (c, -1j * s, -1j * s, c)


def _ry(t):
    c, s = math.cos(t / 2), math.sin(t / 2)
    return (c, -s, s, c)


def _rz(t):
    e = cmath.exp(-0.5j * t)
    return (e, 0j, 0j, e.conjugate())


def _phase(t):
    return (1 + 0j, 0j, 0j, cmath.exp(1j * t))


def _rot(phi, theta, omega):
    c, s = math.cos(theta / 2), math.sin(theta / 2)
    return (cmath.exp(-0.5j * (phi + omega)) * c, -cmath.exp(0.5j * (phi - omega)) * s,
            cmath.exp(-0.5j * (phi - omega)) * s, cmath.exp(0.5j * (phi + omega)) * c)


_WRITTEN = {"RX": _rx, "RY": _ry, "RZ": _rz, "PhaseShift": _phase, "Rot": _rot}
_SCALARS = (float, int, np.floating, np.integer)


def matrix2(op, operator) -> tuple:
    """``(a, b, c, d)`` of a one-qubit IR operation's matrix ``[[a, b], [c, d]]`` (Python
    complex numbers); ``operator(op)`` (``(array, diagonal)``, batch axis of 1) for the rest."""
    f = _WRITTEN.get(op.name)
    if f is not None and all(isinstance(p, _SCALARS) for p in op.params):
        a, b, c, d = f(*(float(p) for p in op.params))
        return (a.conjugate(), c.conjugate(), b.conjugate(), d.conjugate()) if op.adjoint else (a, b, c, d)
    array, diagonal = operator(op)
    if diagonal:
        d0, d1 = array.reshape(-1).tolist()
        return (d0, 0j, 0j, d1)
    (a, b), (c, d) = array.reshape(2, 2).tolist()
    return (a, b, c, d)


def _times(m, e):
    """``m @ e`` of two ``(a, b, c, d)`` matrices."""
    a, b, c, d = m
    p, q, r, s = e
    return (a * p + b * r, a * q + b * s, c * p + d * r, c * q + d * s)


def forward(state, ops, n: int, operator, apply) -> np.ndarray:
    """``state`` ``(2**n,)`` after ``ops`` (an unbatched circuit's operations); ``operator(op)``
    and ``apply(states (1, 1, 2**n), array, wires, n, diagonal=)`` are :mod:`.small`'s."""
    pending, run = {}, []  # wire -> (a, b, c, d); the waiting permutation gates
    for op in ops:
        wires = op.wires
        if len(wires) == 1:
            m = matrix2(op, operator)
            w = wires[0]
            pending[w] = m if w not in pending else _times(m, pending[w])
            continue
        cols = _permutation(op, operator) if not op.params else None
        if cols is not None and not any(w in pending for w in wires):
            run.append((cols, tuple(wires)))
            continue
        state = _flush(state, pending, run, n, apply)
        pending, run = {}, []
        if cols is not None:
            run.append((cols, tuple(wires)))
        else:
            array, diagonal = operator(op)
            state = apply(state.reshape(1, 1, -1), array, wires, n, diagonal=diagonal).reshape(-1)
    return _flush(state, pending, run, n, apply)


def _flush(state, pending, run, n: int, apply):
    """The waiting permutation run, then the pending one-qubit matrices."""
    if run:
        state = state[_gather_index(n, tuple(run))]
    if len(pending) >= LAYER_MIN_WIRES:
        return _layer(state, pending, n)
    for w, (a, b, c, d) in pending.items():
        array = np.array([[[a, b], [c, d]]])
        state = apply(state.reshape(1, 1, -1), array, (w,), n, diagonal=False).reshape(-1)
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
