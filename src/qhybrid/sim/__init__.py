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

The names above load on first use (PEP 562): importing a submodule that needs neither
torch nor the circuit machinery (``sim.jit``, ``sim.walsh``, ``sim.memory``: the QAOA fast
path) does not import them.
"""
from __future__ import annotations

import importlib
import sys
import types

_HOMES = {
    "adjoint_jacobian": "adjoint", "Cache": "cache", "Circuit": "circuit", "DenseTerm": "circuit",
    "Measurement": "circuit", "Observable": "circuit", "Operation": "circuit", "PauliTerm": "circuit",
    "GATES": "gates", "final_state": "simulate", "simulate": "simulate",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'qhybrid.sim' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_HOMES))


class _Package(types.ModuleType):
    """Keeps ``qhybrid.sim.simulate`` the function: importing the submodule of the same name
    binds the module on its package, which the eager package then replaced by the function."""

    def __setattr__(self, name, value):
        if name == "simulate" and isinstance(value, types.ModuleType):
            value = value.simulate
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
