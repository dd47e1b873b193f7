"""`QAOA`: energy, adjoint gradient, probabilities and optimum of one problem instance.

A facade: validates the arguments, holds the cost diagonal (built once, on the
target device) and the problem's facts, and hands each sweep to the planned
fused CPU sweep (``qaoa.sweep.FusedSweep``: layout, buffers, numba kernels) or
to the torch reference (``qaoa.torch_engine``, CPU or CUDA). Parameters follow PennyLane's QAOA
tutorial: ``params`` of shape ``(2, p)`` = ``[gammas, betas]``, or a batch
``(B, 2, p)``. The numba path is numpy and numba alone: torch is imported only
for the torch backend (a CUDA device, or ``backend="torch"``).
"""
from __future__ import annotations

import numpy as np

from qhybrid.errors import DeviceError, OperationError
from qhybrid.qaoa import memory
from qhybrid.qaoa.problem import CostDiagonal, bitstring, cost_diagonal

DTYPES = ("complex128", "complex64")
BACKENDS = ("auto", "numba", "torch")


def _has_numba() -> bool:
    from qhybrid.sim import jit

    jit.notice()  # one line on stderr when numba is missing
    return jit.HAVE_NUMBA


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


def _top(probs: np.ndarray, k: int) -> list[tuple[float, int]]:
    """The ``k`` largest ``(probability, index)`` pairs, largest first."""
    k = min(k, probs.size)
    idx = np.argpartition(-probs, k - 1)[:k]
    idx = idx[np.argsort(-probs[idx], kind="stable")]
    return [(float(probs[i]), int(i)) for i in idx]


class QAOA:
    """A QAOA instance: graph + problem -> energies and gradients of the PennyLane circuit.

    Args:
        graph: networkx graph on nodes ``0..n-1``, or an edge list ``[(i, j[, w]), ...]``.
        problem: ``"maxcut"`` (default) or ``"maxclique"`` (unconstrained, X mixer).
        dtype: ``"complex128"`` (default) or ``"complex64"`` (or the torch dtypes).
        device: torch device (``"cpu"``, ``"cuda"``).
        backend: ``"auto"`` (numba on CPU when installed, else torch), ``"numba"``, ``"torch"``.
        n_nodes: node count for an edge list with isolated trailing nodes.
        weight: edge attribute holding weights (default 1); None ignores weights (as ``qml.qaoa.maxcut``).
        memory_limit: bytes allowed (default: free CUDA memory or 80% of RAM).

    Raises:
        MemoryLimitError: the instance does not fit.
        DeviceError: CUDA requested but absent, or numba asked for on CUDA.

    Example:
        >>> q = QAOA([(0, 1), (1, 2), (2, 0)])
        >>> e, g = q.energy_and_grad([[0.5], [0.5]])
    """

    STORE_BUDGET = memory.STORE_BUDGET  # bytes of state buffers the stored-state sweep may hold

    def __init__(self, graph, *, problem: str = "maxcut", dtype="complex128", device="cpu",
                 backend: str = "auto", n_nodes: int | None = None, weight: str | None = "weight",
                 memory_limit: int | None = None, block_bits: int | None = None):
        dtype = _dtype_name(dtype)
        where = _device_type(device)
        if where == "cuda":
            import torch

            if not torch.cuda.is_available():
                raise DeviceError(f"device {device} requested but CUDA is not available; use 'cpu'")
        if backend not in BACKENDS:
            raise OperationError(f"unknown backend {backend!r}; valid: {', '.join(BACKENDS)}")
        if backend == "auto":
            backend = "numba" if (where == "cpu" and _has_numba()) else "torch"
        if backend == "numba" and where != "cpu":
            raise DeviceError(f"the numba backend runs on CPU only, not {device}; use backend='torch'")
        self.dtype, self.device, self.backend, self.problem = dtype, device, backend, problem
        self._limit = memory_limit
        n = n_nodes if n_nodes is not None else (graph.n_nodes if hasattr(graph, "n_nodes") else None)
        n_est = n if n is not None else _count_nodes(graph)
        memory.check_fits(memory.required_bytes(n_est, dtype=dtype, backend=backend), n=n_est,
                          device=device, limit=memory_limit)
        self.diagonal: CostDiagonal = cost_diagonal(graph, problem, device=device, n_nodes=n_nodes, weight=weight)
        self.n = self.diagonal.n
        self._sweep = None
        self._torch_prep = None
        self._block_bits = block_bits

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
        if self.backend == "torch":
            from qhybrid.qaoa import torch_engine

            e = torch_engine.energy(self.diagonal, self._tensor(arr), dtype=self._torch_dtype(),
                                    prepared=self._prepared())
            e = e.cpu().numpy()
        else:
            e = np.array([self._numba_sweep(a, grad=False)[0] for a in arr])
        return float(e[0]) if single else e

    def energy_and_grad(self, params):
        """``(<C>, d<C>/dparams)``; gradient shaped like ``params`` (float64 numpy)."""
        arr, single = self._params(params)
        if self.backend == "torch":
            from qhybrid.qaoa import torch_engine

            out = []
            for a in arr:  # one parameter set at a time keeps the reference's temporaries bounded
                e, g = torch_engine.energy_and_grad(self.diagonal, self._tensor(a[None]), dtype=self._torch_dtype(),
                                                    prepared=self._prepared(), stored=self._torch_stored(a.shape[1]))
                out.append((float(e[0]), g[0].cpu().numpy()))
        else:
            out = [self._numba_sweep(a, grad=True) for a in arr]
        if single:
            return out[0]
        return np.array([o[0] for o in out]), np.stack([o[1] for o in out])

    def state(self, params) -> np.ndarray:
        """The final state ``(2**n,)`` for one parameter set, as a numpy array (a copy, on the host)."""
        arr, _ = self._params(params)
        if self.backend == "torch":
            return self._state_tensor(arr).cpu().numpy()
        self._numba_sweep(arr[0], grad=False)
        return self._sweep.final_state()

    def probabilities(self, params) -> np.ndarray:
        """``|<z|psi>|^2`` as float64 ``(2**n,)`` (numpy), index z with wire 0 most significant."""
        psi = self.state(params)
        return (psi.real.astype(np.float64) ** 2 + psi.imag.astype(np.float64) ** 2)

    def most_likely(self, params, k: int = 5) -> list[dict]:
        """The ``k`` most likely bitstrings: ``[{"bitstring", "probability", "cost"}, ...]``."""
        arr, _ = self._params(params)
        if self.backend == "numba" and self._symmetric():
            # psi(0 y) = psi(1 not y): rank the half, then expand each index to its flipped pair
            self._numba_sweep(arr[0], grad=False)
            half = self._sweep.buffers.psi
            pairs = []
            for p, y in _top(half.real.astype(np.float64) ** 2 + half.imag.astype(np.float64) ** 2, (k + 1) // 2):
                pairs += [(p, y), (p, 2**self.n - 1 - y)]
            pairs = pairs[:k]
        elif self.backend == "numba":
            pairs = _top(self.probabilities(params), k)
        else:  # on the torch device: only the k winners come back to the host
            import torch

            probs = self._state_tensor(arr).abs().square().to(torch.float64)
            top = torch.topk(probs, min(k, probs.numel()))
            pairs = list(zip(top.values.tolist(), top.indices.tolist()))
        return [{"bitstring": bitstring(z, self.n), "probability": p, "cost": self.diagonal.cost(z)}
                for p, z in pairs]

    # -- the torch reference ----------------------------------------------------------
    def _torch_dtype(self):
        import torch

        return getattr(torch, self.dtype)

    def _tensor(self, arr: np.ndarray):
        import torch

        return torch.as_tensor(arr, device=self.device)

    def _state_tensor(self, arr: np.ndarray):
        from qhybrid.qaoa import torch_engine

        return torch_engine.forward(self.diagonal, self._tensor(arr[:1]), dtype=self._torch_dtype(),
                                    prepared=self._prepared())[0]

    def _torch_stored(self, p: int) -> bool:
        """Use the stored-state sweep when its ~(2p + 6) states fit (the torch path's temporaries)."""
        need = (2 * p + 6) * memory.state_bytes(self._n_eff(), self.dtype)
        limit = self._limit if self._limit is not None else memory.available_bytes(self.device) // 2
        return self.STORE_TORCH and need <= limit

    STORE_TORCH = True

    def _prepared(self):
        if self._torch_prep is None:
            from qhybrid.qaoa import torch_engine

            self._torch_prep = torch_engine.prepare(self.diagonal, self._torch_dtype())
        return self._torch_prep

    # -- the fused CPU sweep (qaoa.sweep) -------------------------------------------------
    SERIAL_BITS = memory.SERIAL_BITS  # states of at most 2**16 amplitudes run on one thread

    def _symmetric(self) -> bool:
        """Max-Cut is invariant under flipping every bit: keep only the half with wire 0 = 0."""
        return self.problem == "maxcut" and self.n >= 2

    def _n_eff(self) -> int:
        return self.n - 1 if self._symmetric() else self.n

    def _fused(self):
        """The planned sweep (layout and buffers), made on first use."""
        if self._sweep is None:
            from qhybrid.qaoa.sweep import FusedSweep

            self._sweep = FusedSweep(self.diagonal, symmetric=self._symmetric(), dtype=self.dtype,
                                     block_bits=self._block_bits, tile_width=getattr(self, "_tile_width", None))
        return self._sweep

    def _threads(self) -> int:
        """Threads a sweep's kernels run on (one up to ``2**SERIAL_BITS`` amplitudes)."""
        return self._fused().threads(self.SERIAL_BITS)

    def _numba_sweep(self, a: np.ndarray, *, grad: bool):
        """``(energy, gradient or None)``: the stored-state sweep when its states fit the memory
        limit (else ``STORE_BUDGET``), else the un-apply sweep."""
        sweep = self._fused()
        limit = self._limit if self._limit is not None else self.STORE_BUDGET
        return sweep.run(a, grad=grad, threads=sweep.threads(self.SERIAL_BITS), store_limit=limit)

def _count_nodes(graph) -> int:
    if hasattr(graph, "number_of_nodes"):
        return graph.number_of_nodes()
    return 1 + max((max(e[0], e[1]) for e in graph), default=-1)
