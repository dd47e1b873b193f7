"""How the Triton kernels cut work into passes over the state, in plain Python (no torch, no
Triton): the launchers (:mod:`.qml_ops`, :mod:`qhybrid.qaoa.triton_sweep`) cut with these
functions and the estimate (:mod:`qhybrid.estimate.gpu`) counts with the same ones.

A *unit* below is one read or one write of one whole state (``2**m`` amplitudes).
"""
from __future__ import annotations

#: Index bits a pass holds by default (``ops.Tiles.pass_bits``): a tile has all their values.
PASS_BITS = 10


def runs(gates, pass_bits: int = PASS_BITS) -> list[tuple[int, int]]:
    """``[(lo, hi), ...]``: ``gates[lo:hi]`` (``(control, target)`` pairs) consecutive, on distinct
    targets, at most ``pass_bits`` of them; together they cover ``gates`` in order.

    Example:
        >>> runs([(-1, 0), (-1, 1), (0, 1), (1, 2)], 3)
        [(0, 2), (2, 4)]
    """
    out, lo, seen = [], 0, set()
    for k, (_, target) in enumerate(gates):
        if target in seen or len(seen) == pass_bits:
            out.append((lo, k))
            lo, seen = k, set()
        seen.add(target)
    if lo < len(gates):
        out.append((lo, len(gates)))
    return out


def qml_traffic(gates, pass_bits: int = PASS_BITS, *, grad: bool = True) -> dict:
    """One sample's state traffic through the QML layer on the Triton set: ``{"passes", "units"}``.

    The product state is written (1), each run of gates read and written (2), ``rho`` read (1);
    with the gradient ``lambda = O psi`` read and written (2), each run undone on both states (4)
    and ``lambda`` reduced for the factor gradients (1).
    """
    r = len(runs(gates, pass_bits))
    if not grad:
        return {"passes": 2 + r, "units": 2 + 2 * r}
    return {"passes": 4 + 2 * r, "units": 5 + 6 * r}


def qaoa_traffic(m: int, p: int, pass_bits: int = PASS_BITS, *, grad: bool = True) -> dict:
    """State traffic of one QAOA energy (``grad`` False) or energy+gradient on ``m`` simulated
    qubits (the half state's ``n - 1`` for Max-Cut): ``{"passes": launches over the state, "units"}``.

    A forward layer is a low pass and ``h = max(2k - 1, 1)`` high passes (``k`` high groups of at
    most ``pass_bits`` bits), each reading and writing ``psi`` (the first only writes: it starts
    from the uniform state); the energy is one read. With the gradient: the pass reading the energy
    also writes ``psi`` and ``lambda`` (3), then per layer ``h`` two-state high passes (4 each) and a
    two-state low pass (4; layer 0's only reads, 2).

    Example:
        >>> qaoa_traffic(23, 2)
        {'passes': 17, 'units': 48}
    """
    k = -(-max(0, m - pass_bits) // pass_bits)
    h = max(2 * k - 1, 1)
    passes, units = p * (1 + h), p * 2 * (1 + h) - 1
    if not grad:
        return {"passes": passes + 1, "units": units + 1}
    return {"passes": passes + 1 + p * (h + 1), "units": units + 3 + p * 4 * h + (p - 1) * 4 + 2}
