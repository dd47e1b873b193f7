"""``simulate``: run an engine circuit and return its measurements.

Example::

    import torch
    from qhybrid.sim import simulate, Circuit, Operation, Measurement, Observable
    c = Circuit(2, (Operation("Hadamard", (0,)), Operation("CNOT", (0, 1))),
                (Measurement("expval", Observable.pauli({"ZZ": 1})),))
    (zz,) = simulate(c)            # tensor([1.])  - one value per batch row

The circuit's plan (:func:`~qhybrid.sim.fuse.build_plan`, or the caller's) is bound to its
parameters and its steps run in order, in place on one preallocated state (a layer of 1-qubit
gates reads through the CNOT ladder before it and writes through the one after it, between the
state and a spare buffer kept in the cache, a ladder alone is gathered into it, and the two swap
roles); the memory a run needs is checked before the state is allocated.
"""
from __future__ import annotations

import numpy as np
import torch

from .apply import apply
from .kernels import as_kernel_set
from .fuse import cached_plan
from .measure import measure
from .cache import keep_buffers, spare_buffers
from .memory import check_memory


def initial_state(circuit, *, dtype=torch.complex128, device="cpu", batch: int | None = None,
                  out: torch.Tensor | None = None) -> torch.Tensor:
    """|0...0> (or ``circuit.initial_state``) as a (B, 2**n) tensor, written into ``out`` when given."""
    n = circuit.n_wires
    B = circuit.batch_size if batch is None else batch
    if circuit.initial_state is not None:
        s = torch.as_tensor(circuit.initial_state, device=device).to(dtype).reshape(-1, 2**n)
        if out is not None:
            return out.copy_(s.expand(B, -1))
        return s.expand(B, -1).clone() if s.shape[0] != B else s.clone()
    s = torch.zeros(B, 2**n, dtype=dtype, device=device) if out is None else out.zero_()
    s[:, 0] = 1
    return s


def final_state(circuit, *, dtype=torch.complex128, device="cpu", kernels=None, fuse: bool = True,
                cache=None, n_states: int = 2, out: torch.Tensor | None = None, plan=None,
                matrices=None) -> torch.Tensor:
    """The (B, 2**n) state after all operations. With ``out`` (a (B, 2**n) buffer of ``dtype``
    the caller keeps between calls) the run starts there; the state returned may be ``out`` or
    the spare buffer from ``cache`` (which then keeps ``out`` instead). ``plan``: the circuit's
    :class:`~qhybrid.sim.plan.Plan` when the caller keeps one (else built here, as ``fuse`` says,
    and kept in ``cache`` for the next call of the same structure); ``matrices``: its
    :meth:`~qhybrid.sim.plan.Plan.layer_matrices` when the caller has them; ``kernels`` the
    kernel set (a :class:`~qhybrid.sim.kernels.KernelSet` or its name; None: the device's default)."""
    n = circuit.n_wires
    check_memory(n, batch=circuit.batch_size, dtype=dtype, device=device, n_states=n_states)
    if plan is None:
        plan = cached_plan(circuit.operations, n, fuse=fuse, cache=cache)
    steps = plan.steps(circuit.operations, dtype=dtype, device=device, cache=cache, matrices=matrices)
    return run_steps(circuit, steps, dtype=dtype, device=device, kernels=kernels, cache=cache, out=out)


def run_steps(circuit, steps: list, *, dtype, device, kernels=None, cache=None,
              out: torch.Tensor | None = None) -> torch.Tensor:
    """The state after ``steps`` (bound steps of ``circuit``'s plan) from its initial state; a
    first layer on |0...0> builds the product state; with a spare buffer a layer reads through the
    CNOT ladder before it and writes through the one after it (:func:`ladders_around_layer`), and
    a ladder alone is gathered into the spare buffer."""
    n = circuit.n_wires
    first = steps[0] if steps else None
    if circuit.initial_state is None and first is not None and first.kind == "layer":
        state = product_state(first, n, batch=circuit.batch_size, dtype=dtype, device=device, out=out)
        steps = steps[1:]
    else:
        state = initial_state(circuit, dtype=dtype, device=device, out=out)
    ks = as_kernel_set(kernels, state.device.type)
    spare = spare_buffers(cache, "forward_spare", (state.shape,), state.dtype, state.device) \
        if ks.fused_ladders else None
    spare = spare[0] if spare is not None else None
    k = 0
    while k < len(steps):
        step = steps[k]
        if spare is not None:
            before, layer, after, used = ladders_around_layer(steps, k)
            if layer is not None and (before is not None or after is not None):
                # the layer reads through the ladder before it and / or writes through the one after
                out = ks.apply_layer(state if before is None else spare, layer, n, perm=before, src=state,
                                     after=after, spare=spare)
                if out is not state:
                    state, spare = spare, state
                k += used
                continue
            if step.kind == "perm":  # a ladder alone: gathered into the spare buffer
                ks.permute_into(spare, state, step)
                state, spare = spare, state
                k += 1
                continue
        apply(state, step, n, kernels=ks, cache=cache)
        k += 1
    if spare is not None:  # the cache keeps the buffer the caller does not get
        keep_buffers(cache, "forward_spare", (spare,))
    return state


def ladders_around_layer(steps: list, k: int) -> tuple:
    """``(before, layer, after, count)`` for the steps from ``k``: a layer (at ``k``, or at ``k + 1``
    after a ladder ``before``) and the ladder ``after`` it when no layer follows that one (which
    would read through it instead); ``count`` the steps they are. ``layer`` None: no layer there."""
    before = steps[k] if steps[k].kind == "perm" else None
    j = k + (before is not None)
    if j >= len(steps) or steps[j].kind != "layer":
        return None, None, None, 0
    nxt = steps[j + 1] if j + 1 < len(steps) else None
    after = nxt if nxt is not None and nxt.kind == "perm" and not (
        j + 2 < len(steps) and steps[j + 2].kind == "layer") else None
    return before, steps[j], after, j + 1 - k + (after is not None)


def product_state(layer, n: int, *, batch: int, dtype, device, out: torch.Tensor | None = None) -> torch.Tensor:
    """``(x)_w u_w|0>`` for a first layer of 1-qubit gates on distinct wires, built in place by
    doubling (about two passes, instead of a zeroed state plus one pass per gate), in ``out``
    when given (on CPU in numpy on the tensor's memory: a small state costs microseconds)."""
    state = torch.empty(batch, 2**n, dtype=dtype, device=device) if out is None else out
    cpu = state.device.type == "cpu"
    mats = layer.matrices.numpy() if cpu else layer.matrices.to(dtype)
    cols = {w: mats[r][:, :, 0] for r, w in enumerate(layer.wires)}  # (P, 2) each
    s = state.numpy() if cpu else state
    mul = np.multiply if cpu else torch.mul
    s[:, :1] = 1
    size = 1
    for w in range(n - 1, -1, -1):
        col = cols.get(w)
        if col is None:
            s[:, size:2 * size] = 0
        else:
            mul(s[:, :size], col[:, 1:2], out=s[:, size:2 * size])
            s[:, :size] *= col[:, 0:1]
        size *= 2
    return state


def simulate(circuit, *, dtype=torch.complex128, device="cpu", kernels=None, fuse: bool = True,
             cache=None, plan=None) -> tuple:
    """Run ``circuit``; one tensor per measurement, each with a leading batch axis.

    Args:
        circuit: a :class:`~qhybrid.sim.circuit.Circuit`.
        dtype: ``torch.complex128`` (default) or ``torch.complex64``.
        device: a ``torch.device`` or string (``"cpu"``, ``"cuda"``).
        kernels: the kernel set (:mod:`qhybrid.sim.kernels`): a ``KernelSet``, a registered
            name (``"numba"``, ``"torch"``), or None for the device's default (numba on CPU
            when installed, else the torch reference).
        fuse: fuse gates before running (see :mod:`qhybrid.sim.fuse`).
        cache: a :class:`~qhybrid.sim.cache.Cache` for structure-derived tensors.
        plan: the circuit's :class:`~qhybrid.sim.plan.Plan`, when the caller keeps one
            (:func:`~qhybrid.sim.fuse.build_plan`; it overrides ``fuse``).

    Raises:
        MemoryLimitError: the state would not fit in the available memory.
    """
    ks = as_kernel_set(kernels, torch.device(device).type)
    state = final_state(circuit, dtype=dtype, device=device, kernels=ks, fuse=fuse, cache=cache, plan=plan)
    return tuple(measure(state, m, circuit.n_wires, cache=cache, kernels=ks) for m in circuit.measurements)
