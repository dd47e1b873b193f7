"""The engine's circuit IR: operations, observables, measurements.

Wires are integers ``0..n-1`` (wire 0 = most significant bit of the basis
index). Parameters are floats, or 1-D arrays/tensors of length ``B`` for a
parameter-broadcast batch (one circuit per entry). ``QubitUnitary`` takes its
matrix as its one parameter.

Example::

    from qhybrid.sim.circuit import Circuit, Operation, Observable, Measurement
    c = Circuit(n_wires=2,
                operations=(Operation("Hadamard", (0,)), Operation("RY", (1,), (0.3,), trainable=(0,))),
                measurements=(Measurement("expval", obs=Observable.pauli({"ZZ": 1.0}, wires=(0, 1))),))
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Optional

import numpy as np


@dataclass(frozen=True)
class Operation:
    """One gate of the table in :mod:`qhybrid.sim.gates`.

    Args:
        name: a key of ``GATES``.
        wires: target wires, in the matrix's bit order.
        params: parameters (floats or length-B arrays / tensors).
        trainable: indices into ``params`` whose derivative the adjoint method returns.
        adjoint: apply the gate's inverse.
    """

    name: str
    wires: tuple = ()
    params: tuple = ()
    trainable: tuple = ()
    adjoint: bool = False


@dataclass(frozen=True)
class PauliTerm:
    """``coeff * P`` for a Pauli word, ``word`` a tuple of ``(wire, "X"|"Y"|"Z")``."""

    coeff: complex
    word: tuple


@dataclass(frozen=True)
class DenseTerm:
    """``coeff * M`` for a Hermitian matrix ``M`` on ``wires``."""

    coeff: float
    wires: tuple
    matrix: Any


@dataclass(frozen=True)
class Observable:
    """A Hermitian observable: a sum of Pauli terms and dense terms."""

    paulis: tuple = ()
    dense: tuple = ()

    @staticmethod
    def pauli(terms: dict, wires=None) -> "Observable":
        """Build from ``{"XZ": c}``-style strings on ``wires`` (default 0..len-1),
        or ``{((0, "X"), (2, "Z")): c}`` word tuples."""
        out = []
        for word, c in terms.items():
            if isinstance(word, str):
                ws = wires if wires is not None else tuple(range(len(word)))
                word = tuple((w, p) for w, p in zip(ws, word) if p != "I")
            out.append(PauliTerm(complex(c), tuple(word)))
        return Observable(paulis=tuple(out))

    @staticmethod
    def hermitian(matrix, wires) -> "Observable":
        return Observable(dense=(DenseTerm(1.0, tuple(wires), np.asarray(matrix)),))

    @property
    def wires(self) -> tuple:
        ws = {w for t in self.paulis for w, _ in t.word} | {w for t in self.dense for w in t.wires}
        return tuple(sorted(ws))


@dataclass(frozen=True)
class Measurement:
    """``kind`` in ``expval``, ``var``, ``probs``, ``state``; ``probs`` may name ``wires``."""

    kind: str
    obs: Optional[Observable] = None
    wires: tuple = ()


@dataclass(frozen=True)
class Circuit:
    """Operations then measurements on ``n_wires`` qubits, optionally from ``initial_state``
    (a ``(2**n,)`` or ``(B, 2**n)`` array)."""

    n_wires: int
    operations: tuple = ()
    measurements: tuple = ()
    initial_state: Any = field(default=None, compare=False)

    @cached_property
    def batch_size(self) -> int:
        """The broadcast batch B (1 when nothing is broadcast; worked out once per circuit)."""
        return max([1] + self._batch_sizes())

    @cached_property
    def broadcast_ops(self) -> bool:
        """Whether any operation parameter carries a batch axis, even of size 1 (the initial
        state is not looked at: a converted tape's is always 2-d)."""
        return bool(self._batch_sizes(with_state=False))

    def _batch_sizes(self, with_state: bool = True) -> list:
        sizes = []
        for op in self.operations:
            for p in op.params:
                if type(p) is float:  # the common case, without numpy's dispatch
                    continue
                nd = np.ndim(p)
                if op.name == "QubitUnitary":
                    nd -= 2
                elif op.name == "DiagonalQubitUnitary":
                    nd -= 1
                if nd > 0:
                    sizes.append(int(np.shape(p)[0]))
        if with_state and self.initial_state is not None and np.ndim(self.initial_state) == 2:
            sizes.append(int(np.shape(self.initial_state)[0]))
        return sizes


def pauli_masks(word, n) -> tuple:
    """``(xmask, zmask, number of Y)`` of a Pauli ``word`` on ``n`` wires: X and Y set bit
    ``n-1-w`` of ``xmask``, Z and Y that of ``zmask``, so that
    ``P|c> = i^{nY} (-1)^{popcount(c & zmask)} |c ^ xmask>``."""
    x = z = ny = 0
    for w, p in word:
        bit = 1 << (n - 1 - w)
        if p in ("X", "Y"):
            x |= bit
        if p in ("Z", "Y"):
            z |= bit
        ny += p == "Y"
    return x, z, ny


def split_terms(obs, n) -> tuple:
    """(z_terms [(coeff, zmask)], other [(coeff * i^nY, xmask, zmask)]) of the Pauli part."""
    zt, other = [], []
    for t in obs.paulis:
        x, z, ny = pauli_masks(t.word, n)
        c = complex(t.coeff) * (1j**ny)
        if x == 0:
            zt.append((c.real, z))
        else:
            other.append((c, x, z))
    return zt, other
