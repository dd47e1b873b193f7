"""The qhybrid engine: pure computation on batched torch state vectors.

Public API::

    from qhybrid.sim import (Circuit, Operation, Observable, Measurement,
                             simulate, final_state, adjoint_jacobian, build_plan, structure_key,
                             Cache, GATES, KernelSet, get_kernel_set)

    simulate(circuit, *, dtype=torch.complex128, device="cpu", kernels=None, fuse=True, cache=None, plan=None)
        -> tuple of tensors, one per measurement, each with a leading batch axis
    final_state(circuit, *, dtype, device, kernels, fuse, cache, plan) -> (B, 2**n) tensor
    adjoint_jacobian(circuit, *, dtype, device, kernels, cache, plan) -> (M, T, B) float64 tensor
    build_plan(operations, n, *, fuse=True) -> Plan   # once per structure_key(operations)

States are ``(B, 2**n)``, wire 0 the most significant bit. ``B`` is the
parameter-broadcast batch (1 when nothing is broadcast). ``kernels`` is the kernel set
(:mod:`qhybrid.sim.kernels`: ``get_kernel_set("numba")``, ``"torch"``, ...; None: numba on CPU
when installed, else the torch reference), chosen once by ``devices.resolve``. See ``README.md``
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
    "build_plan": "fuse", "Plan": "plan", "structure_key": "plan",
    "KernelSet": "kernels", "get_kernel_set": "kernels",
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
