"""The two ways a device runs a circuit: numpy alone (:mod:`qhybrid.sim.small`) or the engine.

A fresh process that runs a few small circuits spends its time loading the engine (torch,
numba and its cached kernels), not simulating; below ``small_wires`` wires (default
:data:`~qhybrid.sim.small.SMALL_MAX_WIRES`) ``qhybrid.cpu`` runs circuits with numpy alone and
imports neither. Both paths take the engine's circuits and give numpy results with the same
numbers (1e-10 in complex128); the device chooses per circuit, by its number of wires.

Per call the engine wins from about :data:`SWITCH_WIRES` wires (numpy walks the state several
times a gate, the engine's fused kernels once a layer), so a program that keeps running such
circuits moves to the engine once the numpy path has spent :data:`SWITCH_SECONDS` on them: a
short program never loads the engine, a long one pays its loading once it has run long enough
for that to be small beside its run (:meth:`NumpyPath.engine_due`).

Each path has ``final_state(circuit, plan)``, ``measure(state, m, n)``, ``expval(state, obs,
n)``, ``adjoint(circuit, state, plan) -> (values, jacobian)`` (numpy), ``numpy(state)`` and
``copy(state)``; states are the path's own (numpy arrays or torch tensors).
"""
from __future__ import annotations

import contextlib
import time

import numpy as np

from ..sim import small
from . import engine

def state_numpy(state) -> np.ndarray:
    """A state of either path as numpy: a numpy array as it is, a torch tensor's numpy view (torch's
    elementwise ops on small tensors cost ms on 2 busy cores)."""
    return state if isinstance(state, np.ndarray) else state.detach().cpu().resolve_conj().numpy()


#: Circuits of at least this many wires move to the engine once numpy has spent
#: :data:`SWITCH_SECONDS` on them (smaller ones cost the same on both: the call's overhead).
SWITCH_WIRES = 8
#: About what loading the engine costs a warm process (torch, numba, cached kernels).
SWITCH_SECONDS = 2.0


class NumpyPath:
    """:mod:`qhybrid.sim.small` on numpy states of the device's dtype."""

    def __init__(self, dtype_name: str):
        self.dtype = np.dtype(dtype_name)
        self.seconds = 0.0  # spent on circuits of SWITCH_WIRES wires or more

    def engine_due(self) -> bool:
        """Whether circuits of :data:`SWITCH_WIRES` wires or more should now run on the engine."""
        return self.seconds >= SWITCH_SECONDS

    def _timed(self, n: int, run, *args, **kwargs):
        if n < SWITCH_WIRES:
            return run(*args, **kwargs)
        t0 = time.perf_counter()
        try:
            return run(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - t0

    def final_state(self, circuit, plan=None):
        return self._timed(circuit.n_wires, small.final_state, circuit, dtype=self.dtype)

    def measure(self, state, m, n: int):
        return small.measure(state, m, n)

    def expval(self, state, obs, n: int):
        return small.expval(state, obs, n)

    def adjoint(self, circuit, state=None, plan=None):
        return self._timed(circuit.n_wires, small.adjoint_jacobian, circuit, dtype=self.dtype,
                           return_values=True, state=state)

    @staticmethod
    def numpy(state):
        return state

    @staticmethod
    def copy(state):
        return state.copy()


class EngineThreads:
    """A batch's ``threads`` option: torch's and numba's thread counts set to ``n`` when the
    engine first runs in the batch (:meth:`engage`), restored when the batch ends; a batch that
    runs on numpy alone (one thread, no BLAS) never imports them. ``n`` None: nothing set."""

    def __init__(self, n: int | None):
        self.n = n
        self._stack = contextlib.ExitStack()
        self._engaged = False

    def engage(self) -> None:
        if self.n is not None and not self._engaged:
            from ..sim.jit import threads

            self._stack.enter_context(threads(self.n))
            self._engaged = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self._stack.__exit__(*exc)


class EnginePath:
    """The engine (:mod:`qhybrid.sim`) with the device's kernel set, cache and fusion; each call
    first engages the batch's :class:`EngineThreads` (``device._batch_threads``)."""

    def __init__(self, device):
        self._dev = device

    def _engaged(self):
        self._dev._batch_threads.engage()
        return self._dev

    def final_state(self, circuit, plan=None):
        d = self._engaged()
        return engine.final_state(circuit, dtype=d.dtype, device=d._torch_device, kernels=d.kernels, fuse=d._fuse,
                                  cache=d._cache, plan=plan)

    def measure(self, state, m, n: int):
        d = self._engaged()
        return engine.measure(state, m, n, cache=d._cache, kernels=d.kernels).cpu().numpy()

    def expval(self, state, obs, n: int):
        d = self._engaged()
        return engine.expval(state, obs, n, cache=d._cache, kernels=d.kernels).numpy()

    def adjoint(self, circuit, state=None, plan=None):
        d = self._engaged()
        vals, jac = engine.adjoint_jacobian(circuit, dtype=d.dtype, device=d._torch_device, kernels=d.kernels,
                                            cache=d._cache, fuse=d._fuse, return_values=True, state=state,
                                            plan=plan)
        return vals.numpy(), jac.numpy()

    @staticmethod
    def numpy(state):
        return state.cpu().numpy()

    @staticmethod
    def copy(state):
        return state.clone()


def check_small_wires(value) -> int:
    """``small_wires`` as an int, or :class:`~qhybrid.errors.DeviceError` naming the bad value."""
    from ..errors import DeviceError

    if value is None:
        return small.SMALL_MAX_WIRES
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 0:
        raise DeviceError(f"small_wires={value!r} must be a non-negative integer (0: always the engine; "
                          f"default {small.SMALL_MAX_WIRES})")
    return int(value)
