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
from .adjoint import adjoint_jacobian
from .cache import Cache
from .circuit import Circuit, DenseTerm, Measurement, Observable, Operation, PauliTerm
from .gates import GATES
from .simulate import final_state, simulate

__all__ = [
    "Cache", "Circuit", "DenseTerm", "GATES", "Measurement", "Observable", "Operation", "PauliTerm",
    "adjoint_jacobian", "final_state", "simulate",
]
