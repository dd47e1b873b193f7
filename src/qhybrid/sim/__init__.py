"""The qhybrid engine: pure computation on batched torch state vectors.

Public API::

    from qhybrid.sim import (Circuit, Operation, Observable, Measurement,
                             simulate, final_state, adjoint_jacobian, Cache, GATES)

    simulate(circuit, *, dtype=torch.complex128, device="cpu", fast=True, fuse=True, cache=None)
        -> tuple of tensors, one per measurement, each with a leading batch axis
    final_state(circuit, *, dtype, device, fast, fuse, cache) -> (B, 2**n) tensor
    adjoint_jacobian(circuit, *, dtype, device, fast, cache) -> (M, T, B) float64 tensor

States are ``(B, 2**n)``, wire 0 the most significant bit. ``B`` is the
parameter-broadcast batch (1 when nothing is broadcast). See ``README.md``
for how fusion and the adjoint method work.
"""
import importlib

# name -> submodule; loaded on first use, so that ``from qhybrid.sim import memory`` (a
# check before any state exists) does not import torch kernels and numba
_EXPORTS = {
    "adjoint_jacobian": "adjoint", "Cache": "cache", "GATES": "gates", "final_state": "simulate",
    "simulate": "simulate", "Circuit": "circuit", "DenseTerm": "circuit", "Measurement": "circuit",
    "Observable": "circuit", "Operation": "circuit", "PauliTerm": "circuit",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
