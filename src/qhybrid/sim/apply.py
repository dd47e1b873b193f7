"""``apply``: the one dispatch that runs a step (:mod:`qhybrid.sim.steps`) on a state, in place.

``apply(state, step, n, kernels=ks)`` updates ``state`` (``(B, 2**n)``) through the kernel set
``ks`` (:mod:`qhybrid.sim.kernels`: numba on CPU, the torch reference, ...) and returns it; the
set is chosen once by the caller (``devices.resolve(...).kernel_set()``, or
:func:`~qhybrid.sim.kernels.as_kernel_set` at the engine's entry points); ``kernels=None``
takes the default set for the state's device. :func:`apply_layer` can, on a set with
``fused_ladders``, read a layer's input through a permutation and write its output through
another (the CNOT ladders before and after it in the passes of the layer alone). Kernels
trust their inputs.
"""
from __future__ import annotations

import torch

from .kernels import KernelSet, as_kernel_set
from .kernels.planar_layout import NO_TABLES, ROW_BITS, layer_passes  # noqa: F401  (re-exported)
from .steps import Dense, Diagonal, Layer, Permutation, PhaseLookup, Swap

__all__ = ["apply", "apply_layer", "generator_overlap", "permute_into", "layer_passes", "NO_TABLES", "ROW_BITS"]


def _ks(kernels, state) -> KernelSet:
    return kernels if isinstance(kernels, KernelSet) else as_kernel_set(kernels, state.device.type)


def permute_into(out: torch.Tensor, state: torch.Tensor, step: Permutation, *, kernels=None) -> torch.Tensor:
    """``out`` (another buffer) <- ``step`` applied to ``state``, in one gather pass (a set with
    ``fused_ladders``): the caller's spare buffer then holds the state, no copy back."""
    _ks(kernels, state).permute_into(out, state, step)
    return out


def _apply_diagonal(ks, state, step: Diagonal, n, cache):
    k = len(step.wires)
    d = step.diagonal
    if k == 0:
        state.mul_(d[:, :1])
    elif k == n and list(step.wires) == list(range(n)):
        state.mul_(d)
    else:
        ks.apply_diagonal(state, d, step.wires, n)


_DISPATCH = {
    Dense: lambda ks, state, step, n, cache: ks.apply_dense(state, step.matrix, step.wires, n),
    Diagonal: _apply_diagonal,
    Layer: lambda ks, state, step, n, cache: ks.apply_layer(state, step, n),
    Swap: lambda ks, state, step, n, cache: ks.apply_swap(state, step.wires, step.ctrl, n),
    Permutation: lambda ks, state, step, n, cache: ks.apply_permutation(state, step, n, cache=cache),
    PhaseLookup: lambda ks, state, step, n, cache: ks.phase_lookup(state, step.table, step.index),
}


def apply(state: torch.Tensor, step, n: int, *, kernels=None, cache=None) -> torch.Tensor:
    """Apply ``step`` to ``state`` (B, 2**n) in place and return it (``cache`` holds scratch).

    Args:
        kernels: a :class:`~qhybrid.sim.kernels.KernelSet`, a registered set's name, or None
            (the default set for the state's device).

    Example::

        from qhybrid.sim.steps import Dense
        apply(state, Dense((0,), hadamard[None]), n)
    """
    _DISPATCH[type(step)](_ks(kernels, state), state, step, n, cache)
    return state


def apply_layer(state: torch.Tensor, step: Layer, n: int, *, kernels=None, perm: Permutation | None = None,
                src: torch.Tensor | None = None, after: Permutation | None = None,
                spare: torch.Tensor | None = None) -> torch.Tensor:
    """A run of 1-qubit gates (on the numba set in the planar passes of :func:`layer_passes`;
    gates on different wires commute); returns the buffer that holds the result. With ``perm``
    the layer runs on ``perm`` applied to ``src`` (another buffer), read through on the way in,
    and the result lands in ``state``: a CNOT ladder and the layer after it in the passes of
    the layer alone. With ``after`` the ladder after the layer is applied too, its last pass
    writing through the ladder's map into the other buffer (``src``, or ``spare`` without
    ``perm``): the result then lies in ``state`` or in that buffer (the one returned; the other
    is left as scratch). Sets without ``fused_ladders`` apply the ladders as separate steps."""
    return _ks(kernels, state).apply_layer(state, step, n, perm=perm, src=src, after=after, spare=spare)


def generator_overlap(bra: torch.Tensor, ket: torch.Tensor, gen, wires, n: int, *, kernels=None) -> torch.Tensor:
    """``<bra| G |ket>`` per batch row, for a generator ``G`` on ``wires``.

    ``gen`` is ``(d,)`` for a diagonal generator, else ``(d, d)``. Returns (B,) complex128.
    """
    return _ks(kernels, ket).generator_overlap(bra, ket, gen, tuple(wires), n)
