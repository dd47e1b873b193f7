"""The engine as the device sees it, loaded on first use.

Importing :mod:`qhybrid.plugin` and creating ``qml.device("qhybrid.cpu", ...)`` import neither
torch nor numba (a fresh process pays ~2-4 s for torch alone on a quiet 2-core machine, and a
script that only builds devices, draws circuits or fails early never needs them): the names
below resolve on first access (PEP 562), i.e. when a device first executes or plans a tape.

``engine.final_state`` and the others are the engine's own functions
(:mod:`qhybrid.sim`); :func:`torch_dtype` maps a dtype name to torch's; :func:`notice` prints
one line on stderr, once per process, when the kernel cache is cold (the first run after an
install compiles the kernels it uses).
"""
from __future__ import annotations

import importlib
import sys

_HOMES = {
    "final_state": "qhybrid.sim.simulate", "adjoint_jacobian": "qhybrid.sim.adjoint",
    "Circuit": "qhybrid.sim.circuit", "measure": "qhybrid.sim.measure",
    "sample_bits": "qhybrid.sim.measure", "expval": "qhybrid.sim.observables",
    "Cache": "qhybrid.sim.cache", "PlanCache": "qhybrid.plugin.plan",
    "convert_op": "qhybrid.plugin.convert", "convert_observable": "qhybrid.plugin.convert",
    "to_numpy": "qhybrid.plugin.convert", "device_pipeline": "qhybrid.plugin.preprocess",
}

__all__ = sorted(_HOMES) + ["notice", "torch_dtype"]


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def torch_dtype(name: str):
    """torch's complex dtype of ``name`` (``'complex128'`` or ``'complex64'``)."""
    import torch

    return getattr(torch, name)


_noticed = False


def notice() -> None:
    """One line on stderr, once per process, when no compiled kernel is cached yet (the engine
    then compiles each kernel it uses on first use, once per install and machine)."""
    global _noticed
    if _noticed:
        return
    _noticed = True
    from qhybrid import kernel_cache

    try:
        folder = kernel_cache.cache_dir()
        cold = not folder.is_dir() or not any(folder.rglob("*.nbi"))
    except OSError:
        return
    if cold:
        print(f"qhybrid: compiling the engine's kernels on first use (once per install; cache {folder})",
              file=sys.stderr, flush=True)
