"""``qml.counts`` from drawn basis-state indices, in PennyLane's format, without its per-shot
strings.

PennyLane's ``CountsMP.process_samples`` turns every shot's bits into a string and counts the
strings (~3.5 us a shot: 0.35 s at 100,000 shots, most of a counts call on either device).
Here the indices are counted (``np.bincount``, or ``np.unique`` when the outcomes far outnumber
the shots) and only each outcome seen is written as a key. The dict is the one
``process_samples`` returns for the same draw: outcomes in ascending order, ``np.str_`` keys
(plain ``str`` keys, every outcome, with ``all_outcomes=True``) and ``np.int64`` counts; for an
observable, its eigenvalues (``np.float64``) as keys, ascending, or in ``eigvals()`` order with
``all_outcomes=True``. Counts of mid-circuit measurement values, or with explicit ``eigvals``,
are left to PennyLane.
"""
from __future__ import annotations

import numpy as np
from pennylane.measurements import CountsMP


def counted_from_indices(mp) -> bool:
    """Whether ``mp`` is a counts of wires or of an observable (counted here)."""
    return isinstance(mp, CountsMP) and mp.mv is None and mp._eigvals is None  # noqa: SLF001


def sub_indices(indices: np.ndarray, positions, n: int) -> np.ndarray:
    """The index of each basis state restricted to the wires at ``positions`` (in that order)."""
    if list(positions) == list(range(n)):
        return indices
    k = len(positions)
    out = np.zeros_like(indices)
    for j, pos in enumerate(positions):
        out |= ((indices >> (n - 1 - pos)) & 1) << (k - 1 - j)
    return out


def _tally(indices: np.ndarray, k: int):
    """``(outcomes, counts)`` of the ``k``-bit ``indices``, outcomes ascending, counts int64."""
    if 2**k <= 4 * indices.size + 64:
        counts = np.bincount(indices, minlength=2**k)
        seen = np.flatnonzero(counts)
        return seen, counts[seen].astype(np.int64, copy=False)
    seen, counts = np.unique(indices, return_counts=True)
    return seen, counts.astype(np.int64, copy=False)


def _bitstrings(indices: np.ndarray, k: int) -> np.ndarray:
    """Each of ``indices`` as a ``k``-character string of 0s and 1s (wire 0 first), ``<U{k}``."""
    if k == 0:
        return np.full(indices.shape, "", dtype="<U1")
    chars = ((indices[:, None] >> np.arange(k - 1, -1, -1)) & 1).astype(np.uint8) + ord("0")
    return np.ascontiguousarray(chars).view(f"S{k}")[:, 0].astype(f"<U{k}")


def counts_dict(mp, indices: np.ndarray, position: dict, n: int) -> dict:
    """``mp``'s counts of the drawn ``indices`` (one bin), as ``mp.process_samples`` gives them.

    Args:
        mp: a counts measurement for which :func:`counted_from_indices` holds.
        indices: the drawn basis-state indices (of the state after ``mp``'s diagonalizing
            gates), wire 0 the most significant bit.
        position: the device's wire labels -> their bit positions.
        n: the number of wires.

    Returns:
        ``{outcome: count}``.
    """
    wires = mp.wires if len(mp.wires) else list(position)
    k = len(wires)
    seen, counts = _tally(sub_indices(indices, [position[w] for w in wires], n), k)
    if mp.obs is None:
        if mp.all_outcomes:
            full = np.zeros(2**k, dtype=np.int64)
            full[seen] = counts
            return {f"{i:0{k}b}": c for i, c in enumerate(full)}
        return dict(zip(_bitstrings(seen, k), counts))
    keys = mp.eigvals()
    eig = np.array([1.0, -1.0]) if np.array_equal(keys, [1.0, -1.0]) else np.asarray(keys)
    # (PennyLane's values are 1.0 - 2 * bit in that case, floats whatever the eigenvalues' type)
    values, where = np.unique(eig[seen], return_inverse=True)
    totals = np.bincount(where.ravel(), weights=counts, minlength=values.size).astype(np.int64)
    if mp.all_outcomes:
        out = {v: np.int64(0) for v in keys}
        out.update(zip(values, totals))
        return out
    return dict(zip(values, totals))
