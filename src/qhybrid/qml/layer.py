"""``QuantumLayer``: the CCQC circuit as a torch module, one batched simulation per call.

The layer's parameters have the names and shapes of the weights the Braket
example hands to ``qml.qnn.TorchLayer`` (``w_layer1``, ``w_layer2``,
``rotation``), so a state dict moves between this layer and the PennyLane
one built by :func:`qhybrid.qml.reference.pennylane_layer`.
"""
from __future__ import annotations

import math

import torch
from torch import nn

from qhybrid.errors import OperationError
from qhybrid.qml import circuit
from qhybrid.qml.adjoint import CircuitExpval, Plan, plan_chunk
from qhybrid.sim.cache import Cache
from qhybrid.sim.kernels import KernelSet, KernelSetUnavailable, as_kernel_set, get_kernel_set, kernel_set_names
DTYPES = {torch.complex64: torch.float32, torch.complex128: torch.float64}


class QuantumLayer(nn.Module):
    """The circuit-centric classifier evaluated on a batch of angle vectors.

    Args:
        n_wires: number of wires = number of input features (at least 2).
        ranges: one entangling layer per entry, with that control-target range.
        embedding: the AngleEmbedding rotation, ``"X"``, ``"Y"`` or ``"Z"``.
        dtype: ``torch.complex128`` (outputs float64) or ``torch.complex64`` (float32).
        device: where parameters and states live (CPU or CUDA).
        generator: a ``torch.Generator`` for the initial weights, uniform in
            ``[0, 2 pi)`` as TorchLayer initialises them.
        kernel: the kernel set: ``"auto"`` (numba on CPU when installed, else torch), a
            registered name (``"torch"``, ``"numba"`` (CPU only), ``"triton"``), or a
            :class:`~qhybrid.sim.kernels.KernelSet` (e.g. ``devices.resolve(...).kernel_set()``).
        max_batch_states: the most samples whose states are simulated at once (None: as many
            as fit the free memory and :data:`qhybrid.sim.memory.CHUNK_BYTES`); a batch is cut
            into chunks of at most this many, with the same outputs and gradients.
        memory_share: this process's share of its device's free memory (``1 / processes`` when
            several share it, e.g. data-parallel ranks on one machine).

    Attributes:
        last_chunk: samples per chunk of the last call (None before the first).

    Raises:
        OperationError: a bad ``n_wires``, range, embedding or dtype.

    Example:
        >>> layer = QuantumLayer(4)
        >>> layer(torch.zeros(8, 4, dtype=torch.float64)).shape
        torch.Size([8, 1])
    """

    def __init__(self, n_wires: int, *, ranges=(1, 3), embedding: str = "X",
                 dtype: torch.dtype = torch.complex128, device=None, generator=None,
                 kernel: str | KernelSet = "auto", max_batch_states: int | None = None,
                 memory_share: float = 1.0):
        super().__init__()
        if max_batch_states is not None and (not isinstance(max_batch_states, int) or max_batch_states < 1):
            raise OperationError(f"max_batch_states={max_batch_states!r}: give a positive integer or None")
        if not 0 < memory_share <= 1:
            raise OperationError(f"memory_share={memory_share!r}: must be in (0, 1]")
        if not isinstance(n_wires, int) or n_wires < 2:
            raise OperationError(f"n_wires={n_wires!r}: the circuit needs an integer of at least 2 wires")
        ranges = tuple(int(r) for r in ranges)
        if not ranges:
            raise OperationError("ranges=(): give at least one entangling layer, e.g. ranges=(1, 3)")
        bad = [r for r in ranges if r % n_wires == 0]
        if bad:
            raise OperationError(f"range {bad[0]} on {n_wires} wires puts control and target on one "
                                 f"wire; use ranges that are not multiples of {n_wires}")
        if embedding not in circuit.EMBEDDINGS:
            raise OperationError(f"embedding={embedding!r}: valid are {', '.join(circuit.EMBEDDINGS)}")
        if isinstance(kernel, str) and kernel != "auto":
            if kernel not in kernel_set_names():
                raise OperationError(f"kernel={kernel!r}: valid are auto, {', '.join(kernel_set_names())}")
            try:
                kernel = get_kernel_set(kernel)
            except KernelSetUnavailable as e:
                raise OperationError(f"kernel={kernel!r}: {e}; use kernel='auto' or 'torch'") from None
        elif not isinstance(kernel, (str, KernelSet)):
            raise OperationError(f"kernel={kernel!r}: valid are auto, {', '.join(kernel_set_names())} "
                                 "or a KernelSet")
        if dtype not in DTYPES:
            raise OperationError(f"dtype={dtype}: valid are torch.complex128 and torch.complex64")
        self.n_wires = n_wires
        self.ranges = ranges
        self.embedding = embedding
        self.dtype = dtype
        self.kernel = kernel
        self.max_batch_states = max_batch_states
        self.memory_share = float(memory_share)
        self.last_chunk = None
        real = DTYPES[dtype]
        gates = []
        for k, rng in enumerate(ranges):
            if k > 0:
                gates += [(-1, w) for w in range(n_wires)]
            gates += list(circuit.chain_pairs(n_wires, rng))
        self.plan = Plan(n_wires, tuple(gates))
        self._states = _state_cache()
        for k in range(len(ranges)):
            weights = torch.rand((2, n_wires, 3), generator=generator, dtype=torch.float64) * 2 * math.pi
            self.register_parameter(f"w_layer{k + 1}", nn.Parameter(weights.to(device=device, dtype=real)))
        rotation = torch.rand((3,), generator=generator, dtype=torch.float64) * 2 * math.pi
        self.rotation = nn.Parameter(rotation.to(device=device, dtype=real))

    def layer_weights(self) -> list[torch.Tensor]:
        """The entangling layers' weights, ``(2, n, 3)`` each, in circuit order."""
        return [getattr(self, f"w_layer{k + 1}") for k in range(len(self.ranges))]

    def matrices(self, inputs: torch.Tensor):
        """The kernel's inputs: per-sample factors ``(B, n, 2)``, gate matrices, observable."""
        weights = self.layer_weights()
        dtype = self.dtype
        n = self.n_wires
        # every Rot of the circuit in one call (a few autograd nodes, not a few per layer):
        # the first layer's Rots (folded into the product state), the gates in circuit order, the final Rot
        params = torch.cat([w.reshape(2 * n, 3) for w in weights] + [self.rotation.reshape(1, 3)])
        rots = circuit.rot_matrices(params, dtype)  # (2 n L + 1, 2, 2)
        embedded = circuit.embedding_vectors(inputs, self.embedding, dtype)  # (B, n, 2)
        factors = (rots[:n].unsqueeze(0) @ embedded.unsqueeze(-1)).squeeze(-1)
        obs = circuit.z_observable_of(rots[-1])
        return factors, rots[n:-1], obs

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        """``<Z_0>`` for each row of ``inputs`` ``(B, n)`` (or one ``(n,)``): ``(B, 1)`` (or ``(1,)``)."""
        single = inputs.ndim == 1
        x = inputs.unsqueeze(0) if single else inputs
        if x.ndim != 2 or x.shape[1] != self.n_wires:
            raise OperationError(f"inputs of shape {tuple(inputs.shape)}: expected (batch, {self.n_wires})")
        where = self.rotation.device.type
        if isinstance(self.kernel, KernelSet) and not self.kernel.runs_on(where):
            raise OperationError(f"kernel={self.kernel.name!r} runs on {'/'.join(d.upper() for d in self.kernel.device_types)} only; "
                                 f"the layer is on {self.rotation.device}: use kernel='auto' or 'torch'")
        x = x.to(device=self.rotation.device, dtype=self.rotation.dtype)
        factors, mats, obs = self.matrices(x)
        kernels = as_kernel_set(None if self.kernel == "auto" else self.kernel, where)
        grad = torch.is_grad_enabled() and (factors.requires_grad or mats.requires_grad or obs.requires_grad)
        self.last_chunk = plan_chunk(len(x), self.n_wires, factors, kernels, self._states, grad=grad,
                                     max_samples=self.max_batch_states, share=self.memory_share)
        out = CircuitExpval.apply(factors, mats, obs, self.plan, self._states, kernels,
                                  self.last_chunk).unsqueeze(-1)
        return out[0] if single else out

    def extra_repr(self) -> str:
        return f"n_wires={self.n_wires}, ranges={self.ranges}, embedding={self.embedding!r}, dtype={self.dtype}"

    def buffer_bytes(self) -> int:
        """Bytes of the state buffers the layer keeps between calls."""
        return self._states.nbytes

    def _apply(self, fn, *args, **kwargs):  # .to(device) / .double(): drop cached buffers
        self._states.clear()
        return super()._apply(fn, *args, **kwargs)

    def __getstate__(self):  # pickle and deepcopy: the parameters, not the kept state buffers
        state = self.__dict__.copy()
        state["_states"] = _state_cache()
        return state


def _state_cache() -> Cache:
    """Where a layer keeps its state buffers between calls (:mod:`qhybrid.sim.cache`): without a
    byte budget, as the buffers of the last calls are all needed again by the next ones."""
    return Cache(max_bytes=1 << 62)
