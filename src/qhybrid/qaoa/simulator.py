"""`QAOA`: energy, adjoint gradient, probabilities and optimum of one problem instance.

A facade: validates the arguments, holds the cost diagonal (built once, on the
target device) and the problem's facts, and hands each sweep to its kernel set's QAOA
engine (``KernelSet.qaoa_engine``: the numba set's planned fused CPU sweep,
``qaoa.sweep.NumbaQAOA``; the torch reference's ``qaoa.torch_engine.TorchQAOA``, CPU or
CUDA), chosen once. Parameters follow PennyLane's QAOA tutorial: ``params`` of shape
``(2, p)`` = ``[gammas, betas]``, or a batch ``(B, 2, p)``. The numba path is numpy and
numba alone: torch is imported only for the torch set (a CUDA device, or ``backend="torch"``).
"""
from __future__ import annotations

import numpy as np

from qhybrid.devices import require_cuda
from qhybrid.errors import DeviceError, OperationError
from qhybrid.qaoa import memory
from qhybrid.qaoa.problem import CostDiagonal, bitstring, cost_diagonal

DTYPES = ("complex128", "complex64")


def _kernel_set(backend, where: str, device):
    """The kernel set for ``backend`` (``"auto"``, a registered name, or a KernelSet) on ``where``.

    Raises:
        OperationError: an unknown name; DeviceError: a set that cannot run there.
    """
    from qhybrid.sim.kernels import KernelSet, KernelSetUnavailable, default_kernel_set, get_kernel_set
    from qhybrid.sim.kernels import kernel_set_names

    if isinstance(backend, KernelSet):
        ks = backend
    elif backend == "auto":
        return default_kernel_set(where)
    else:
        try:
            ks = get_kernel_set(backend)
        except KeyError:
            raise OperationError(f"unknown backend {backend!r}; valid: auto, {', '.join(kernel_set_names())}") from None
        except KernelSetUnavailable as e:
            raise DeviceError(f"backend={backend!r}: {e}; use backend='auto'") from None
    if not ks.runs_on(where):
        raise DeviceError(f"the {ks.name} backend runs on {', '.join(ks.device_types)} only, not {device}; "
                          "use backend='torch'")
    return ks


def _dtype_name(dtype) -> str:
    """``"complex128"`` / ``"complex64"`` from a name or a torch dtype.

    Raises:
        OperationError: any other dtype.
    """
    name = str(dtype).replace("torch.", "")
    if name not in DTYPES:
        raise OperationError(f"unknown dtype {dtype!r}; valid: {', '.join(DTYPES)}")
    return name


def _device_type(device) -> str:
    return getattr(device, "type", None) or str(device).split(":", 1)[0]


class QAOA:
    """A QAOA instance: graph + problem -> energies and gradients of the PennyLane circuit.

    Args:
        graph: networkx graph on nodes ``0..n-1``, or an edge list ``[(i, j[, w]), ...]``.
        problem: ``"maxcut"`` (default) or ``"maxclique"`` (unconstrained, X mixer).
        dtype: ``"complex128"`` (default) or ``"complex64"`` (or the torch dtypes).
        device: torch device (``"cpu"``, ``"cuda"``).
        backend: the kernel set: ``"auto"`` (numba on CPU when installed, else torch), a
            registered name (``"numba"``, ``"torch"``, ``"triton"``), or a
            :class:`~qhybrid.sim.kernels.KernelSet` (e.g. ``devices.resolve(...).kernel_set()``).
        n_nodes: node count for an edge list with isolated trailing nodes.
        weight: edge attribute holding weights (default 1); None ignores weights (as ``qml.qaoa.maxcut``).
        memory_limit: bytes allowed (default: free CUDA memory or 80% of RAM).

    Raises:
        MemoryLimitError: the instance does not fit.
        DeviceError: CUDA requested but absent, or a kernel set asked for where it cannot run.

    Example:
        >>> q = QAOA([(0, 1), (1, 2), (2, 0)])
        >>> e, g = q.energy_and_grad([[0.5], [0.5]])
    """

    STORE_BUDGET = memory.STORE_BUDGET  # bytes of state buffers the stored-state sweep may hold (the numba engine)

    def __init__(self, graph, *, problem: str = "maxcut", dtype="complex128", device="cpu",
                 backend: str = "auto", n_nodes: int | None = None, weight: str | None = "weight",
                 memory_limit: int | None = None, block_bits: int | None = None):
        dtype = _dtype_name(dtype)
        where = _device_type(device)
        if where == "cuda":
            require_cuda(f"device {device}", "'cpu'")
        self.kernels = _kernel_set(backend, where, device)
        self.dtype, self.device, self.backend, self.problem = dtype, device, self.kernels.name, problem
        n = n_nodes if n_nodes is not None else (graph.n_nodes if hasattr(graph, "n_nodes") else None)
        n_est = n if n is not None else _count_nodes(graph)
        need = memory.required_bytes(n_est, dtype=dtype, kernels=self.kernels.name,
                                     symmetric=problem == "maxcut" and n_est >= 2)
        memory.check_fits(need, n=n_est,
                          device=device, limit=memory_limit)
        self.diagonal: CostDiagonal = cost_diagonal(graph, problem, device=device, n_nodes=n_nodes, weight=weight)
        self.n = self.diagonal.n
        self.engine = self.kernels.qaoa_engine(self.diagonal, dtype=dtype, device=device,
                                               symmetric=problem == "maxcut" and self.n >= 2,
                                               memory_limit=memory_limit, block_bits=block_bits)

    # -- the problem -------------------------------------------------------------
    @property
    def optimum(self) -> float:
        """The minimum of the cost (e.g. ``-maxcut``)."""
        return self.diagonal.minimum

    def optimal_bitstrings(self, max_count: int = 64) -> list[str]:
        """Bitstrings (wire 0 first) reaching the optimum."""
        return self.diagonal.optimum(max_bitstrings=max_count)[1]

    def approximation_ratio(self, energy: float) -> float:
        """Max-Cut: ``E / C_min`` (expected cut / maximum cut, both negative costs).
        Max-Clique: ``(C_max - E) / (C_max - C_min)``, 1 at the optimum, 0 at the worst state."""
        if self.problem == "maxcut":
            return float(energy) / self.optimum if self.optimum != 0 else 1.0
        span = self.diagonal.maximum - self.diagonal.minimum
        return (self.diagonal.maximum - float(energy)) / span if span else 1.0

    # -- parameters --------------------------------------------------------------
    def _params(self, params) -> tuple[np.ndarray, bool]:
        arr = params.detach().cpu().numpy() if hasattr(params, "detach") else np.asarray(params)
        arr = np.asarray(arr, dtype=np.float64)
        single = arr.ndim == 2
        if single:
            arr = arr[None]
        if arr.ndim != 3 or arr.shape[1] != 2 or arr.shape[2] < 1:
            raise OperationError(f"params must have shape (2, p) or (B, 2, p) with p >= 1; got {tuple(arr.shape)}")
        return arr, single

    # -- public computations ----------------------------------------------------------
    def energy(self, params):
        """``<C>``: a float for ``(2, p)`` params, a float64 array ``(B,)`` for a batch."""
        arr, single = self._params(params)
        e = self.engine.energy(arr)
        return float(e[0]) if single else e

    def energy_and_grad(self, params):
        """``(<C>, d<C>/dparams)``; gradient shaped like ``params`` (float64 numpy)."""
        arr, single = self._params(params)
        out = self.engine.energy_and_grad(arr)
        if single:
            return out[0]
        return np.array([o[0] for o in out]), np.stack([o[1] for o in out])

    def state(self, params) -> np.ndarray:
        """The final state ``(2**n,)`` for one parameter set, as a numpy array (a copy, on the host)."""
        arr, _ = self._params(params)
        return self.engine.state(arr)

    def probabilities(self, params) -> np.ndarray:
        """``|<z|psi>|^2`` as float64 ``(2**n,)`` (numpy), index z with wire 0 most significant."""
        psi = self.state(params)
        return (psi.real.astype(np.float64) ** 2 + psi.imag.astype(np.float64) ** 2)

    def most_likely(self, params, k: int = 5) -> list[dict]:
        """The ``k`` most likely bitstrings: ``[{"bitstring", "probability", "cost"}, ...]``."""
        arr, _ = self._params(params)
        return [{"bitstring": bitstring(z, self.n), "probability": p, "cost": self.diagonal.cost(z)}
                for p, z in self.engine.top(arr, k)]


def _count_nodes(graph) -> int:
    if hasattr(graph, "number_of_nodes"):
        return graph.number_of_nodes()
    return 1 + max((max(e[0], e[1]) for e in graph), default=-1)
