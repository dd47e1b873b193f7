"""Runs of Z-rotations merged per wire set (numpy only: the plugin's tape plans use it without
loading the engine; :mod:`.fuse` merges every circuit's runs with it)."""
from __future__ import annotations

#: The Z-rotation for a number of wires (``exp(-i theta/2 Z...Z)`` alike).
ZROT_NAME = {1: "RZ", 2: "IsingZZ"}


def zrotation_groups(run) -> list:
    """A run of Z-rotations, ``run`` ``[(wires, adjoint), ...]``, as one rotation per distinct wire
    set: ``[(sorted wires, ((position in run, sign), ...)), ...]``, the 1-qubit ones first, else in
    first-seen order (sign -1 for an adjoint rotation: the merged angle is ``sum sign * angle``)."""
    groups: dict = {}
    for i, (wires, adjoint) in enumerate(run):
        groups.setdefault(frozenset(wires), []).append((i, -1 if adjoint else 1))
    out = [(tuple(sorted(ws)), tuple(members)) for ws, members in groups.items()]
    return sorted(out, key=lambda g: len(g[0]) > 1)  # stable: first-seen order kept
