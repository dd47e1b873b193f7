"""``simulate``: run an engine circuit and return its measurements.

Example::

    import torch
    from qhybrid.sim import simulate, Circuit, Operation, Measurement, Observable
    c = Circuit(2, (Operation("Hadamard", (0,)), Operation("CNOT", (0, 1))),
                (Measurement("expval", Observable.pauli({"ZZ": 1})),))
    (zz,) = simulate(c)            # tensor([1.])  - one value per batch row

Everything is in place on one preallocated state; the memory a run needs is
checked before the state is allocated.
"""
from __future__ import annotations

import torch

from .fuse import lower
from .apply import apply_kop
from .measure import measure
from .memory import check_memory


def initial_state(circuit, *, dtype=torch.complex128, device="cpu", batch: int | None = None) -> torch.Tensor:
    """|0...0> (or ``circuit.initial_state``) as a (B, 2**n) tensor."""
    n = circuit.n_wires
    B = circuit.batch_size if batch is None else batch
    if circuit.initial_state is not None:
        s = torch.as_tensor(circuit.initial_state, device=device).to(dtype).reshape(-1, 2**n)
        return s.expand(B, -1).clone() if s.shape[0] != B else s.clone()
    s = torch.zeros(B, 2**n, dtype=dtype, device=device)
    s[:, 0] = 1
    return s


def final_state(circuit, *, dtype=torch.complex128, device="cpu", fast: bool = True, fuse: bool = True,
                cache=None, n_states: int = 2) -> torch.Tensor:
    """The (B, 2**n) state after all operations."""
    n = circuit.n_wires
    check_memory(n, batch=circuit.batch_size, dtype=dtype, device=device, n_states=n_states)
    kops = lower(circuit.operations, n, dtype=dtype, device=device, fuse=fuse, cache=cache)
    first = kops[0] if kops else None
    if (circuit.initial_state is None and first is not None and first.kind == "layer"
            and len(set(first.wires)) == len(first.wires)):
        state = product_state(first, n, batch=circuit.batch_size, dtype=dtype, device=device)
        kops = kops[1:]
    else:
        state = initial_state(circuit, dtype=dtype, device=device)
    for kop in kops:
        apply_kop(state, kop, n, fast=fast, cache=cache)
    return state


def product_state(layer, n: int, *, batch: int, dtype, device) -> torch.Tensor:
    """``(x)_w u_w|0>`` for a first layer of 1-qubit gates on distinct wires, built in place by
    doubling (about two passes, instead of a zeroed state plus one pass per gate)."""
    cols = {w: layer.data[r][:, :, 0].to(dtype) for r, w in enumerate(layer.wires)}  # (P, 2) each
    state = torch.empty(batch, 2**n, dtype=dtype, device=device)
    state[:, :1] = 1
    size = 1
    for w in range(n - 1, -1, -1):
        col = cols.get(w)
        if col is None:
            state[:, size:2 * size] = 0
        else:
            torch.mul(state[:, :size], col[:, 1:2], out=state[:, size:2 * size])
            state[:, :size].mul_(col[:, 0:1])
        size *= 2
    return state


def simulate(circuit, *, dtype=torch.complex128, device="cpu", fast: bool = True, fuse: bool = True,
             cache=None) -> tuple:
    """Run ``circuit``; one tensor per measurement, each with a leading batch axis.

    Args:
        circuit: a :class:`~qhybrid.sim.circuit.Circuit`.
        dtype: ``torch.complex128`` (default) or ``torch.complex64``.
        device: a ``torch.device`` or string (``"cpu"``, ``"cuda"``).
        fast: use the numba kernels on CPU (the torch reference path otherwise).
        fuse: fuse gates before running (see :mod:`qhybrid.sim.fuse`).
        cache: a :class:`~qhybrid.sim.cache.Cache` for structure-derived tensors.

    Raises:
        MemoryLimitError: the state would not fit in the available memory.
    """
    state = final_state(circuit, dtype=dtype, device=device, fast=fast, fuse=fuse, cache=cache)
    return tuple(measure(state, m, circuit.n_wires, cache=cache, fast=fast) for m in circuit.measurements)
