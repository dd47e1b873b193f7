"""How the batched kernels (:mod:`.batched`) cut a list of 2x2 gates into cache blocks (numpy only).

A kernel module for the kernel cache's digest: the ``njit`` kernels of :mod:`.batchedkernels` run the
blocks cut here, and :data:`LOW_BITS` / :data:`BLOCK_BITS` shape their loops.

A gate only mixes amplitudes that differ in its target bit; its control, when it is not among
those bits, is one value on a whole set of amplitudes that share every other bit. So a run of
consecutive gates whose targets all lie in one set ``S`` of bits (``|S| <= BLOCK_BITS``) can be
applied *chunk by chunk*: a chunk is the ``2**|S|`` amplitudes that share the bits outside
``S``; it is copied into cache once, every gate of the run is applied there (a gate whose
control lies outside ``S`` on the chunks whose control bit is set), and it is written back
once. One read and one write of the state per block instead of one per gate: the forward
pass and the adjoint sweep of a layer cost a couple of passes over the state, not ``n``.

:func:`blocks` cuts the list greedily, in order: a block takes gates while their targets fit,
then the next starts. :func:`schedule` first reorders the list where gates commute (gates on
disjoint wires), so that fewer blocks cover it: the DressedQNN at 26 wires, 7 blocks in circuit
order, 5 scheduled. Every block holds the lowest
:data:`LOW_BITS` bits (so a chunk is rows of ``2**LOW_BITS`` contiguous amplitudes, whole cache
lines) and is filled up with the lowest free bits (longer contiguous rows). A register of at
most ``BLOCK_BITS`` bits is one block whose one chunk is the whole state (no copy).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

#: Bits of a block: chunks of 2**14 amplitudes, 256 KiB of float64 planes per state, so the
#: sweep's two states stay in a core's L2 (1 MiB here) while every gate of the block runs.
BLOCK_BITS = 14

#: Bits every block holds: rows of 8 contiguous amplitudes, a 64-byte line per float64 plane.
LOW_BITS = 3


class Layout(NamedTuple):
    """The loop layout of a gate list on ``n`` bits, one entry a gate (int64 arrays): ``lo``,
    ``hi`` the lower and higher of its bit positions (``hi = -1`` without a control), ``cbit``
    the control's bit (0 without), ``tbit`` the target's bit, ``n_outer`` the runs of ``2**lo``
    contiguous pairs it touches."""

    lo: np.ndarray
    hi: np.ndarray
    cbit: np.ndarray
    tbit: np.ndarray
    n_outer: np.ndarray


def layout(n: int, gates) -> Layout:
    """The :class:`Layout` of ``(control, target)`` gates (``control = -1``: none) on ``n`` wires."""
    rows = []
    for control, target in gates:
        tpos = n - 1 - target
        if control < 0:
            rows.append((tpos, -1, 0, 1 << tpos, 1 << (n - 1 - tpos)))
            continue
        cpos = n - 1 - control
        lo, hi = min(cpos, tpos), max(cpos, tpos)
        rows.append((lo, hi, 1 << cpos, 1 << tpos, 1 << (n - 2 - lo)))
    if not rows:
        return Layout(*(np.zeros(0, dtype=np.int64) for _ in range(5)))
    return Layout(*(np.array(col, dtype=np.int64).reshape(len(rows)) for col in zip(*rows)))


@dataclass(frozen=True, eq=False)
class Block:
    """Gates ``index`` of the list run chunk by chunk.

    Attributes:
        index: the gates' positions in the list (int64), in the order the block runs them.
        lay: their :class:`Layout` on the chunk (local bit positions).
        ext: per gate, its control's bit in the state when that lies outside the block (the
            gate runs on the chunks whose start has it), else 0.
        starts: each chunk's first amplitude (every combination of the bits outside the block).
        offs: the chunk's rows: row ``h`` is amplitudes ``start + offs[h] + j``, ``j < W``.
        W: contiguous amplitudes a row.
    """

    index: np.ndarray
    lay: Layout
    ext: np.ndarray
    starts: np.ndarray
    offs: np.ndarray
    W: int

    @property
    def direct(self) -> bool:
        """One row a chunk: the chunk is contiguous in the state and runs in place (no copy)."""
        return self.offs.shape[0] == 1


def bit_combinations(bits) -> np.ndarray:
    """Every index made of the given bits, ``sum_k ((i >> k) & 1) << bits[k]`` for ``i < 2**len``."""
    idx = np.arange(1 << len(bits), dtype=np.int64)
    out = np.zeros_like(idx)
    for k, b in enumerate(bits):
        out |= ((idx >> k) & 1) << b
    return out


def _groups(n: int, gates, max_bits: int, low_bits: int) -> list[tuple[int, int, set]]:
    """``(g0, g1, bits)`` per block: gates taken in order while their targets fit in ``max_bits``."""
    if n <= max_bits:
        return [(0, len(gates), set(range(n)))] if gates else []
    low = set(range(min(low_bits, max_bits - 1)))
    out, g0, bits = [], 0, set(low)
    for g, (_, target) in enumerate(gates):
        pos = n - 1 - target
        if pos not in bits and len(bits) == max_bits:
            out.append((g0, g, bits))
            g0, bits = g, set(low)
        bits.add(pos)
    if g0 < len(gates):
        out.append((g0, len(gates), bits))
    for _, _, bits in out:  # filled with the lowest free bits: longer contiguous rows
        free = (b for b in range(n) if b not in bits)
        while len(bits) < max_bits:
            bits.add(next(free))
    return out


def _block(n: int, gates, index: np.ndarray, bits: set) -> Block:
    order = sorted(bits)
    local = {b: i for i, b in enumerate(order)}
    nl = len(order)
    k = 0
    while k < nl and order[k] == k:
        k += 1
    ext, rows = [], []
    for g in index:
        control, target = gates[g]
        tl = local[n - 1 - target]
        cpos = n - 1 - control if control >= 0 else -1
        if cpos >= 0 and cpos in local:
            rows.append((nl - 1 - local[cpos], nl - 1 - tl))
            ext.append(0)
        else:
            rows.append((-1, nl - 1 - tl))
            ext.append(1 << cpos if cpos >= 0 else 0)
    return Block(index=index, lay=layout(nl, rows), ext=np.array(ext, dtype=np.int64),
                 starts=bit_combinations([b for b in range(n) if b not in bits]),
                 offs=bit_combinations(order[k:]), W=1 << k)


def blocks(n: int, gates, *, max_bits: int = BLOCK_BITS, low_bits: int = LOW_BITS,
           reorder: bool = True) -> tuple[Block, ...]:
    """The gate list ``gates`` (``(control, target)`` wires, ``control = -1``: none) on ``n`` wires
    cut into :class:`Block` s of at most ``max_bits`` bits (at least ``low_bits + 1``), in the
    order :func:`schedule` finds (``reorder=False``: the list's order). Running the blocks one
    after another, each block's gates in its ``index`` order, is running the list.

    Example:
        >>> [b.index.tolist() for b in blocks(20, [(-1, w) for w in range(20)], max_bits=12)]
        [[0, 1, 2, 3, 4, 5, 6, 7, 8], [9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]]
    """
    gates = tuple(gates)
    order = schedule(n, gates, max_bits=max_bits, low_bits=low_bits) if reorder else tuple(range(len(gates)))
    cut = _groups(n, [gates[g] for g in order], max_bits, low_bits)
    return tuple(_block(n, gates, np.array(order[g0:g1], dtype=np.int64), bits) for g0, g1, bits in cut)


def schedule(n: int, gates, *, max_bits: int = BLOCK_BITS, low_bits: int = LOW_BITS) -> tuple[int, ...]:
    """An order of ``gates`` (as :func:`blocks`: indices into the list) that :func:`blocks` cuts into
    as few blocks as it can find, the same circuit: two gates that share a wire keep their order
    (gates on disjoint wires commute), so every wire sees its gates in the list's order.

    A list schedule: a block takes the earliest ready gate (all earlier gates on its wires taken)
    whose target is already among its bits, else the earliest ready one while a bit is free, else
    it closes. The list's own order is kept when that cuts into as few blocks.

    Example:
        >>> gates = [(-1, 3), (-1, 1), (-1, 2), (-1, 0), (-1, 3), (-1, 1)]  # in order: 3 blocks of 3 bits
        >>> schedule(5, gates, max_bits=3, low_bits=1)  # wires 3, 1 (bits 1, 3), then 2, 0: 2 blocks
        (0, 4, 1, 5, 2, 3)
    """
    gates = tuple(gates)
    ident = tuple(range(len(gates)))
    if n <= max_bits or not gates:
        return ident
    low = set(range(min(low_bits, max_bits - 1)))
    waits, after = _dependencies(gates)
    ready = sorted(g for g in ident if not waits[g])
    order, bits = [], set(low)
    while ready:
        pick = next((g for g in ready if n - 1 - gates[g][1] in bits), None)
        if pick is None and len(bits) < max_bits:
            pick = ready[0]
        if pick is None:  # nothing ready fits: the next block
            bits = set(low)
            continue
        ready.remove(pick)
        order.append(pick)
        bits.add(n - 1 - gates[pick][1])
        for g in after[pick]:
            waits[g] -= 1
            if not waits[g]:
                ready.append(g)
        ready.sort()
    mine = len(_groups(n, [gates[g] for g in order], max_bits, low_bits))
    return tuple(order) if mine < len(_groups(n, gates, max_bits, low_bits)) else ident


def _dependencies(gates) -> tuple[list[int], list[list[int]]]:
    """Per gate, how many gates it waits for and which wait for it: each gate follows the last
    earlier gate on each of its wires."""
    last: dict[int, int] = {}
    waits, after = [0] * len(gates), [[] for _ in gates]
    for g, (control, target) in enumerate(gates):
        before = {last[w] for w in (control, target) if w >= 0 and w in last}
        waits[g] = len(before)
        for p in before:
            after[p].append(g)
        for w in (control, target):
            if w >= 0:
                last[w] = g
    return waits, after
