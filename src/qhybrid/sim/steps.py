"""Circuit steps: the small frozen types a plan is made of, each with its inverse.

A step is a gate ready to run on a ``(B, 2**n)`` state: its data is bound (matrices, diagonals,
tables built from the parameters of one call). :func:`qhybrid.sim.apply.apply` is the one
dispatch that runs any of them, on the numba kernels or the torch reference path.

====================  =====================================================================
:class:`Dense`        a ``(P, d, d)`` matrix on ``wires`` (``P`` = 1 or the batch)
:class:`Diagonal`     a ``(P, d)`` diagonal on ``wires``
:class:`Layer`        1-qubit gates on distinct wires, ``(R, P, 2, 2)`` (the planar kernels)
:class:`Swap`         one CNOT (``ctrl``) or SWAP: amplitudes exchanged, no arithmetic
:class:`Permutation`  a run of CNOTs / SWAPs as one GF(2)-linear index map, one gather pass
:class:`PhaseLookup`  ``state[i] *= table[index[i]]``: a fused diagonal from a small table
====================  =====================================================================

``kind`` names each type in one word (``dense``, ``diag``, ``layer``, ``swap``, ``perm``,
``lookup``), for work models and tests that count steps.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np


@dataclass(frozen=True, eq=False)
class Dense:
    """A dense ``(P, d, d)`` torch matrix on ``wires`` (``d = 2**len(wires)``)."""

    kind: ClassVar[str] = "dense"
    wires: tuple
    matrix: Any

    def inverse(self) -> "Dense":
        return Dense(self.wires, self.matrix.conj().transpose(-1, -2).contiguous())


@dataclass(frozen=True, eq=False)
class Diagonal:
    """A ``(P, d)`` torch diagonal on ``wires`` (no wires: a global phase ``(P, 1)``)."""

    kind: ClassVar[str] = "diag"
    wires: tuple
    diagonal: Any

    def inverse(self) -> "Diagonal":
        return Diagonal(self.wires, self.diagonal.conj().contiguous())


@dataclass(frozen=True, eq=False)
class Layer:
    """1-qubit gates on distinct ``wires``: ``matrices`` ``(R, P, 2, 2)``, row r on ``wires[r]``."""

    kind: ClassVar[str] = "layer"
    wires: tuple
    matrices: Any

    def inverse(self) -> "Layer":
        return Layer(self.wires, self.matrices.conj().transpose(-1, -2).contiguous())


@dataclass(frozen=True, eq=False)
class Swap:
    """A CNOT (``ctrl``: control ``wires[0]``, target ``wires[1]``) or a SWAP; ``matrix`` its
    ``(1, 4, 4)`` matrix for the reference path. Its own inverse."""

    kind: ClassVar[str] = "swap"
    wires: tuple
    ctrl: bool
    matrix: Any

    def inverse(self) -> "Swap":
        return self


@dataclass(frozen=True, eq=False)
class Permutation:
    """A run of :class:`Swap` steps as one index map ``g``: ``psi'[j] = psi[g^-1(j)]``.

    ``tables`` (2, 4, 1024) int64: the gather tables of ``g^-1`` (this step) and of ``g`` (its
    inverse), four ten-bit digit tables each (see :func:`qhybrid.sim.fuse.ladder_tables`);
    ``swaps`` the run, for the reference path."""

    kind: ClassVar[str] = "perm"
    wires: tuple
    tables: np.ndarray
    swaps: tuple

    @property
    def gather(self) -> np.ndarray:
        """The (4, 1024) tables this step gathers through."""
        return self.tables[0]

    def inverse(self) -> "Permutation":
        return Permutation(self.wires, np.ascontiguousarray(self.tables[::-1]), self.swaps[::-1])


@dataclass(frozen=True, eq=False)
class PhaseLookup:
    """``state[b, i] *= table[b, index[i]]``: ``table`` (P, m) complex torch, ``index`` (2**n,)
    int32 torch (built once per block shape and cached)."""

    kind: ClassVar[str] = "lookup"
    wires: tuple
    table: Any
    index: Any

    def inverse(self) -> "PhaseLookup":
        return PhaseLookup(self.wires, self.table.conj().contiguous(), self.index)


#: Every step type, for dispatch tables and tests.
STEP_TYPES = (Dense, Diagonal, Layer, Swap, Permutation, PhaseLookup)
