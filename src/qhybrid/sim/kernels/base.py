"""The kernel-set interface: what every backend's kernels implement.

A :class:`KernelSet` is one backend's kernels (numba on CPU, the torch reference on CPU or
CUDA, Triton on CUDA), behind one small interface. The engine (``sim.apply``, ``sim.simulate``,
``sim.adjoint``, ``sim.observables``), ``qaoa.QAOA`` and ``qml.QuantumLayer`` call these methods
and never ask which backend runs; ``devices.resolve(...).kernel_set()`` chooses the set once.

Conventions shared by every method (the kernels trust their inputs; validation is upstream):

* **State**: a torch tensor ``(B, 2**n)``, C-contiguous, ``torch.complex128`` or
  ``torch.complex64``, on :attr:`KernelSet.device_type`; wire 0 is the most significant bit
  (PennyLane's order). A kernel that stores real / imaginary planes converts inside the call
  and writes the complex result back: callers only ever see complex tensors.
* **In place**: methods named ``apply_*`` / ``*_into`` update their first tensor argument in
  place and return None (``apply_layer`` returns the buffer that holds the result).
* **Operands** (matrices, diagonals, tables) are torch tensors of the state's dtype and device,
  with a leading ``P`` axis: ``P == 1`` (shared by the batch) or ``P == B`` (one per row).
* **Reductions** (expectations, inner products) return CPU tensors ``(B,)`` of float64 /
  complex128, whatever the state's dtype or device.
* **Accuracy**: agree with :class:`~qhybrid.sim.kernels.torch_set.TorchKernels` (the reference)
  to 1e-10 in complex128 and 1e-5 in complex64 (``tests/sim/kernelsets.py`` checks every set).

A set registers under its name in :mod:`qhybrid.sim.kernels` (``register_kernel_set``); a set
may subclass the torch reference and override only the kernels it has.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from .registry import KernelSetUnavailable, get_kernel_set  # noqa: F401  (KernelSetUnavailable: its old home)


class KernelSet(ABC):
    """One backend's kernels.

    Attributes:
        name: the registry name (``"numba"``, ``"torch"``, ``"triton"``).
        device_types: torch device types the set's tensors may live on (``("cpu",)``, ...).
        fused_ladders: the set runs ``apply_layer`` with ``perm`` / ``after`` and ``permute_into``
            (a CNOT ladder read or written through in the layer's own passes); without it the
            engine applies ladders as separate steps and never passes ``perm`` / ``after``.
        adjoint_steps: a module / object with the fused adjoint steps (``layer_step``,
            ``fused_step``, ``diagonal_derivatives``, ``product_step``, ``undo_ladder``, as
            :mod:`qhybrid.sim.adjoint_steps`), or None: the adjoint then walks gate by gate
            with :meth:`generator_overlap` and the ``apply_*`` kernels.
    """

    name: ClassVar[str] = ""
    device_types: ClassVar[tuple[str, ...]] = ()
    fused_ladders: ClassVar[bool] = False
    adjoint_steps: Any = None

    def __repr__(self) -> str:
        return f"<KernelSet {self.name!r}>"

    def __reduce__(self):  # pickled by name: unpickling gives the process's registered instance
        return get_kernel_set, (self.name,)

    def runs_on(self, device_type: str) -> bool:
        """Whether the set's kernels take tensors on ``device_type`` (``"cpu"``, ``"cuda"``)."""
        return device_type in self.device_types

    # -- general circuits: gates ------------------------------------------------------------
    @abstractmethod
    def apply_dense(self, state, matrix, wires: tuple, n: int) -> None:
        """``state <- U state``: ``matrix`` ``(P, d, d)``, ``d = 2**len(wires)``, its rows indexed
        by the bits of ``wires`` (``wires[0]`` most significant). Any ``len(wires)``; a
        controlled 2-qubit gate comes as its ``(P, 4, 4)`` matrix."""

    @abstractmethod
    def apply_swap(self, state, wires: tuple, ctrl: bool, n: int) -> None:
        """A CNOT (``ctrl``: control ``wires[0]``, target ``wires[1]``) or a SWAP: amplitudes
        exchanged, no arithmetic."""

    @abstractmethod
    def apply_diagonal(self, state, diagonal, wires: tuple, n: int) -> None:
        """``state[b, i] *= diagonal[p, bits of i on wires]``: ``diagonal`` ``(P, 2**k)``,
        ``k = len(wires) >= 1`` (the engine handles ``k == 0`` and the full diagonal itself)."""

    @abstractmethod
    def phase_lookup(self, state, table, index) -> None:
        """``state[b, i] *= table[p, index[i]]``: ``table`` ``(P, m)`` complex, ``index``
        ``(2**n,)`` int32 (a fused diagonal, e.g. the QAOA cost phase)."""

    @abstractmethod
    def apply_permutation(self, state, step, n: int, *, cache=None) -> None:
        """A CNOT / SWAP ladder as one index map: ``step`` a :class:`~qhybrid.sim.steps.Permutation`
        (``step.gather``: the (4, 1024) int64 digit tables of ``psi'[j] = psi[g^-1(j)]``,
        :func:`qhybrid.sim.fuse.ladder_tables`; ``step.swaps``: the same as :class:`Swap` steps).
        ``cache`` (a :class:`~qhybrid.sim.cache.Cache` or None) may hold scratch buffers."""

    def permute_into(self, out, state, step) -> None:
        """``out <- step(state)`` (another buffer, same shape), one gather pass; only called when
        :attr:`fused_ladders` is set."""
        raise NotImplementedError(f"kernel set {self.name!r} has no fused ladders")

    @abstractmethod
    def apply_layer(self, state, step, n: int, *, perm=None, src=None, after=None, spare=None):
        """1-qubit gates on distinct wires: ``step`` a :class:`~qhybrid.sim.steps.Layer`
        (``step.matrices`` ``(R, P, 2, 2)``, row ``r`` on ``step.wires[r]``). Returns the buffer
        holding the result: ``state`` itself unless :attr:`fused_ladders` and ``perm`` / ``after``
        are given (then as :func:`qhybrid.sim.apply.apply_layer`: read ``src`` through ``perm``,
        write through ``after`` into ``src`` or ``spare``)."""

    @abstractmethod
    def walsh_hadamard(self, state, wires: tuple, n: int) -> None:
        """The unnormalised Walsh-Hadamard transform on ``wires`` (``H^{(x)k} * 2**(k/2)``): the
        butterfly passes ``(a, b) -> (a + b, a - b)`` on each wire's pairs, in place."""

    # -- general circuits: observables and the adjoint's inner products -----------------------
    @abstractmethod
    def weighted_norm(self, state, weights):
        """``sum_i w[i] |state[b, i]|^2``: ``weights`` ``(2**n,)`` real (float64 or the state's
        real dtype), on the state's device. Returns ``(B,)`` float64 (CPU)."""

    @abstractmethod
    def pauli_expval(self, state, x: int, z: int):
        """``<psi| P |psi>`` for one Pauli word without its ``i^{nY}``: ``P|c> =
        (-1)^{popcount(c & z)} |c ^ x>`` (bit ``n-1-w`` = wire ``w``). Returns ``(B,)`` complex128."""

    @abstractmethod
    def diag_mul_into(self, out, state, weights) -> None:
        """``out <- weights * state`` (``weights`` ``(2**n,)`` real), ``out`` another buffer."""

    @abstractmethod
    def pauli_sum_into(self, out, state, terms) -> None:
        """``out += sum_t c_t P_t state``: ``terms`` a list of ``(c, x, z)`` (``c`` complex with
        the ``i^{nY}`` folded in, masks as :meth:`pauli_expval`)."""

    @abstractmethod
    def vdot_real(self, ket, bra):
        """``Re <ket|bra>`` per row (``bra`` often ``O|ket>``): ``(B,)`` float64 (CPU)."""

    @abstractmethod
    def generator_overlap(self, bra, ket, gen, wires: tuple, n: int):
        """``<bra| G |ket>`` per row for a generator on ``wires``: ``gen`` a numpy ``(d,)``
        (diagonal) or ``(d, d)`` array. Returns ``(B,)`` complex128 (CPU)."""

    # -- QAOA ------------------------------------------------------------------------------
    @abstractmethod
    def qaoa_engine(self, diagonal, *, dtype: str, device, symmetric: bool, memory_limit=None, **options):
        """The QAOA sweep of one problem on this set: an object with ``energy(arr) -> (B,) float64``,
        ``energy_and_grad(arr) -> [(float, (2, p) float64), ...]``, ``state(arr) -> (2**n,)``
        numpy and ``top(arr, k) -> [(probability, index), ...]`` (``arr`` float64 numpy
        ``(B, 2, p)`` = [gammas, betas]; only the first row for ``state`` / ``top``).
        ``diagonal`` a :class:`~qhybrid.qaoa.problem.CostDiagonal`; ``symmetric``: Max-Cut's
        bit-flip symmetry may be used (the half state with wire 0 = 0); ``options`` are the
        set's own tuning knobs (ignored by sets without them)."""

    @abstractmethod
    def qaoa_cost_phase(self, state, cost, gamma: float) -> None:
        """``state[b, z] *= exp(-i gamma cost[z])``: ``cost`` ``(2**n,)`` float64 on the state's device."""

    @abstractmethod
    def qaoa_mixer(self, state, beta: float, n: int) -> None:
        """``state <- prod_w RX_w(2 beta) state``: the X mixer on every wire."""

    # -- QML batched layer (qml.adjoint's circuit) -------------------------------------------
    def qml_product_state(self, factors, out, scratch):
        """``factors[b, 0] (x) ... (x) factors[b, n-1]`` (``factors`` ``(B, n, 2)``) as ``(B, 2**n)``
        in the flat buffer ``out``; ``scratch`` as large as ``out``. Returns the ``(B, 2**n)`` view."""
        from qhybrid.sim import batchedtorch

        return batchedtorch.product_state(factors, out, scratch)

    @abstractmethod
    def qml_forward(self, state, mats, plan, scratch) -> None:
        """Run ``plan``'s gates on ``state`` (``(B, 2**n)``, the product state already built):
        ``mats`` ``(G, 2, 2)`` (or ``(G, B, 2, 2)``), gate ``g`` = ``plan.gates[g]`` =
        ``(control, target)``, ``control = -1`` uncontrolled. ``scratch`` a flat buffer of
        ``B * 2**n`` elements of the state's dtype, free to overwrite."""

    @abstractmethod
    def qml_sweep(self, state, lam, mats, plan, scratch, spare=None):
        """The adjoint sweep back through ``plan``: uncompute every gate on ``state`` and
        ``lam`` (``lam`` in place; ``state`` may be left in any form), and return ``(B, G, 2, 2)``
        complex (the mats' dtype and device): per sample ``2 lam_g conj(psi_{g-1})`` reduced on
        gate ``g``'s wire. ``scratch`` / ``spare``: flat buffers as large as a state."""

    @abstractmethod
    def qml_factor_gradients(self, lam, factors):
        """The product state's factor gradients: ``lam`` ``(B, 2**n)`` at the product state,
        ``factors`` ``(B, n, 2)``; ``lam`` may be consumed (overwritten). Returns ``(B, n, 2)`` of the factors' dtype and device:
        ``2 * sum over the other wires of lam * prod_{v != w} conj(factors[v])`` (as
        :func:`qhybrid.sim.batchedtorch.factor_gradients`)."""
