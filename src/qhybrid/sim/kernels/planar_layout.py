"""How the numba planar kernels (:mod:`qhybrid.sim.fastplanar`) cut a layer of 1-qubit gates
into passes (numpy only): :func:`layer_passes`, and :data:`NO_TABLES` ("no permutation")."""
from __future__ import annotations

import functools

import numpy as np

from ..gateblocks import bit_combinations  # numpy only, as this module

#: Row bits per chunk of the planar layer kernels: chunks of ``8 * 2**ROW_BITS`` amplitudes
#: (128 KiB of planes per state), which stay in L2 while every gate of the pass runs.
ROW_BITS = 10

#: "No permutation" for the planar kernels' ``tables`` argument.
NO_TABLES = np.zeros((0, 1024), dtype=np.int64)


@functools.lru_cache(maxsize=256)
def _passes(n: int, bits: tuple) -> tuple:
    N = 1 << n
    if n <= 6:
        z = np.zeros(1, dtype=np.int64)
        return ((tuple(range(len(bits))), np.array([1 << b for b in bits], dtype=np.int64), z, z, N, False),)
    out = []
    # pass A: columns bits 0-2, rows bits 3.., planes column-major: bits 0-2 and 6.. are >= 8 apart
    rows = list(range(3, min(n, 3 + ROW_BITS)))
    sel = tuple(i for i, b in enumerate(bits) if b < 3 or 6 <= b < 3 + len(rows))
    if sel:
        R = 1 << len(rows)
        local = np.array([R << bits[i] if bits[i] < 3 else 1 << (bits[i] - 3) for i in sel], dtype=np.int64)
        out.append((sel, local, bit_combinations(list(range(3 + len(rows), n))), bit_combinations(rows), 8, True))
    # the rest (bits 3-5 and the high bits): row-major planes of 8 columns, the gated bits among the rows
    # (a layer may hold several gates on one wire: they stay in one pass, in order)
    rest = sorted({b for i, b in enumerate(bits) if i not in sel})
    while rest:
        gated, rest = rest[:ROW_BITS], rest[ROW_BITS:]
        group = [i for i, b in enumerate(bits) if b in gated]
        fill = [b for b in range(3, n) if b not in gated][:max(0, min(ROW_BITS, n - 3) - len(gated))]
        rows = sorted(gated + fill)
        local = np.array([8 << rows.index(bits[i]) for i in group], dtype=np.int64)
        others = [b for b in range(3, n) if b not in rows]
        out.append((tuple(group), local, bit_combinations(others), *_segments(rows), False))
    return tuple(out)


def _segments(rows: list) -> tuple:
    """``(offs, W)`` of a row-major pass whose rows of 8 amplitudes are over the bits ``rows``:
    rows whose lowest bits are 3, 4, ... lie side by side in the state, so they are copied as
    one run of ``W`` (at most 1024: a run stays inside one block of the ladder tables' low
    digit). The planes' layout is the same either way, only the copy loops get longer."""
    k = 0
    while k < len(rows) and rows[k] == 3 + k and k < 7:
        k += 1
    return bit_combinations(rows[k:]), 8 << k


def layer_passes(n: int, strides) -> tuple:
    """How the planar kernels (:mod:`qhybrid.sim.fastplanar`) run 1-qubit gates on distinct
    wires (``strides``): a tuple of passes ``(sel, local, starts, offs, W, colmajor)``, each over
    every chunk ``starts[c] + offs[h] + j`` (``j < W``) for the gates ``sel``, ``local`` their
    pairs' distance in the planes. A gate vectorizes when its pairs are at least 8 apart in
    the planes, so no pass may act on the planes' three lowest bits: pass one takes bits 0-2
    as columns but lays the planes out column-major (those bits then lie highest) and runs the
    gates on bits 0-2 and 6-12; the gates on bits 3-5 and on the high bits run in row-major
    passes of 8 columns whose rows are their bits (plus filler bits up to ``ROW_BITS`` rows)."""
    return _passes(int(n), tuple(int(s).bit_length() - 1 for s in strides))
