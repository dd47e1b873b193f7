"""The qhybrid engine: pure computation on batched torch state vectors.

Public API::

    from qhybrid.sim import (Circuit, Operation, Observable, Measurement,
                             simulate, final_state, adjoint_jacobian, build_plan, structure_key,
                             Cache, GATES)

    simulate(circuit, *, dtype=torch.complex128, device="cpu", fast=True, fuse=True, cache=None, plan=None)
        -> tuple of tensors, one per measurement, each with a leading batch axis
    final_state(circuit, *, dtype, device, fast, fuse, cache, plan) -> (B, 2**n) tensor
    adjoint_jacobian(circuit, *, dtype, device, fast, cache, plan) -> (M, T, B) float64 tensor
    build_plan(operations, n, *, fuse=True) -> Plan   # once per structure_key(operations)

States are ``(B, 2**n)``, wire 0 the most significant bit. ``B`` is the
parameter-broadcast batch (1 when nothing is broadcast). See ``README.md``
for how fusion and the adjoint method work.
"""
from .adjoint import adjoint_jacobian
from .cache import Cache
from .circuit import Circuit, DenseTerm, Measurement, Observable, Operation, PauliTerm
from .fuse import build_plan
from .gates import GATES
from .plan import Plan, structure_key
from .simulate import final_state, simulate

__all__ = [
    "Cache", "Circuit", "DenseTerm", "GATES", "Measurement", "Observable", "Operation", "PauliTerm", "Plan",
    "adjoint_jacobian", "build_plan", "final_state", "simulate", "structure_key",
]
