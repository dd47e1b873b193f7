"""The Triton kernel set: the torch reference's interface on the Triton kernels (CUDA).

Registered as ``"triton"`` in :mod:`qhybrid.sim.kernels`. It subclasses the torch reference and
overrides the kernels Triton has (:mod:`qhybrid.sim.triton.ops`: the fused 1-qubit layer, dense
and controlled gates, diagonals, the cost-phase lookup, the Walsh-Hadamard passes, expectations
and inner products, the QAOA sweep, the QML layer: product state, forward runs of gates on distinct targets
(controlled or not) one pass each, the adjoint sweep two states a pass, the factor gradients'
reduction) and, through :mod:`qhybrid.sim.triton.index_ops`, CNOT / SWAP (in place, half the state
moved), ladders of them (one gather pass; ``fused_ladders``: the engine's spare buffer takes the
gathered state, no copy back) and Pauli words with bit flips (expectations and sums of words
applied to a state, one pass each). States are the interface's complex tensors, read in place as interleaved
floats (no planar copy). The set takes CUDA tensors, and CPU tensors under Triton's interpreter
(``TRITON_INTERPRET=1`` before the first import: tests only). Importing this module imports
Triton: without it :func:`qhybrid.sim.kernels.get_kernel_set` reports the set unavailable, and
:func:`qhybrid.devices.gpu_kernel_path` says why a GPU device runs the torch reference.
"""
from __future__ import annotations

import numpy as np
import torch

from qhybrid.sim.triton import interpreting
from qhybrid.sim.triton import index_ops, ops, qml_ops
from qhybrid.sim.triton.ops import DEFAULT, Weights

from .torch_set import TorchKernels

#: dense matrices on more wires than this go to the torch reference (a tile of 2**K x 2**K per row)
MAX_DENSE_WIRES = 4
#: ladders of at most this many CNOTs / SWAPs run gate by gate in place (each moves half the state;
#: a gather and its copy back move the whole state twice)
SWAPS_IN_PLACE = 4
#: gather tables kept on the device (a ladder's tables are made once per run and shape)
TABLES_KEPT = 64


def _bits(wires, n):
    return [n - 1 - int(w) for w in wires]


class TritonKernels(TorchKernels):
    """Triton kernels behind the :class:`~qhybrid.sim.kernels.base.KernelSet` interface.

    Args:
        tiles: the kernels' tile sizes (:class:`qhybrid.sim.triton.ops.Tiles`).
    """

    name = "triton"
    device_types = ("cuda",)
    fused_ladders = True

    def __init__(self, *, tiles: ops.Tiles = DEFAULT):
        self.tiles = tiles
        self._zsums: dict = {}
        self._tables: dict = {}

    def runs_on(self, device_type: str) -> bool:
        """CUDA; also CPU while Triton's interpreter is on."""
        return device_type == "cuda" or (device_type == "cpu" and interpreting())

    # -- gates --------------------------------------------------------------------------------
    def apply_dense(self, state, matrix, wires, n):
        if len(wires) > MAX_DENSE_WIRES:
            return super().apply_dense(state, matrix, wires, n)
        ops.apply_dense(state, matrix, _bits(wires, n), tiles=self.tiles)

    def apply_controlled(self, state, matrix, controls, targets, n):
        """``matrix`` ``(P, d, d)`` on ``targets`` where every wire of ``controls`` is 1 (the
        amplitudes with a control at 0 are not read)."""
        ops.apply_dense(state, matrix, _bits(targets, n), _bits(controls, n), tiles=self.tiles)

    def apply_diagonal(self, state, diagonal, wires, n):
        ops.apply_diagonal(state, diagonal, _bits(wires, n), tiles=self.tiles)

    def phase_lookup(self, state, table, index):
        ops.run_pass(state, [], lookup=(index, 0, table), tiles=self.tiles)

    def apply_swap(self, state, wires, ctrl, n):
        index_ops.swap(state, _bits(wires, n), ctrl, tiles=self.tiles)

    def _gather_tables(self, step, device):
        """``step``'s gather tables on ``device`` (kept: a plan's ladder keeps its table array)."""
        key = (id(step.tables), str(device))
        kept = self._tables.get(key)
        if kept is None or kept[0] is not step.tables:
            if len(self._tables) >= TABLES_KEPT:
                self._tables.clear()
            kept = self._tables[key] = (step.tables, torch.tensor(step.tables[0], device=device))
        return kept[1]

    def permute_into(self, out, state, step):
        """One gather pass (:func:`~qhybrid.sim.triton.index_ops.gather`) into ``out``."""
        index_ops.gather(out, state, self._gather_tables(step, state.device), tiles=self.tiles)

    def apply_permutation(self, state, step, n, *, cache=None):
        """Short ladders gate by gate in place; longer ones gathered into a scratch state and copied back."""
        if len(step.swaps) <= SWAPS_IN_PLACE:
            for swap in step.swaps:
                self.apply_swap(state, swap.wires, swap.ctrl, n)
            return
        scratch = torch.empty_like(state)
        self.permute_into(scratch, state, step)
        state.copy_(scratch)

    def apply_layer(self, state, step, n, *, perm=None, src=None, after=None, spare=None):
        """With ``perm`` / ``after`` (``fused_ladders``): the ladder before gathered from ``src`` into
        ``state``, the one after gathered from ``state`` into the other buffer (``src``, else
        ``spare``), which is returned; one pass each, not inside the layer's passes."""
        if perm is not None:
            self.permute_into(state, src, perm)
        mats = step.matrices.transpose(0, 1)  # (P, R, 2, 2): gate r of row p
        ops.apply_layer(state, _bits(step.wires, n), mats, tiles=self.tiles)
        if after is None:
            return state
        other = src if perm is not None else spare
        self.permute_into(other, state, after)
        return other

    def walsh_hadamard(self, state, wires, n):
        ops.walsh(state, _bits(wires, n), tiles=self.tiles)

    # -- observables and inner products -----------------------------------------------------
    def weighted_norm(self, state, weights):
        return ops.expect(state, Weights("values", w=weights), tiles=self.tiles).cpu()

    def pauli_expval(self, state, x, z):
        if x:  # bit flips: conj(psi[c]) read with psi[c ^ x]
            return index_ops.pauli_expval(state, x, z, tiles=self.tiles).cpu()
        w = Weights.pauli_z([1.0], [z], state.device)
        return ops.expect(state, w, tiles=self.tiles).to(torch.complex128).cpu()

    def diag_mul_into(self, out, state, weights):
        ops.scale(state, Weights("values", w=weights), out, tiles=self.tiles)

    def pauli_sum_into(self, out, state, terms):
        """Every word in one pass over ``out``."""
        index_ops.pauli_sum(out, state, list(terms), tiles=self.tiles)

    def vdot_real(self, ket, bra):
        return ops.inner(ket, bra, tiles=self.tiles).real.cpu()

    def generator_overlap(self, bra, ket, gen, wires, n):
        g = np.asarray(gen)
        if not wires or (g.ndim == 2 and len(wires) > MAX_DENSE_WIRES):
            return super().generator_overlap(bra, ket, gen, wires, n)
        gk = ket.clone()
        gt = torch.tensor(g, dtype=ket.dtype, device=ket.device)[None]
        if g.ndim == 1:
            ops.apply_diagonal(gk, gt, _bits(wires, n), tiles=self.tiles)
        else:
            ops.apply_dense(gk, gt, _bits(wires, n), tiles=self.tiles)
        return ops.inner(bra, gk, tiles=self.tiles).cpu()

    # -- QAOA ---------------------------------------------------------------------------------
    def qaoa_engine(self, diagonal, *, dtype, device, symmetric, memory_limit=None, **options):
        from qhybrid.qaoa.triton_sweep import TritonSweep

        return TritonSweep(diagonal, symmetric=symmetric, dtype=dtype, device=device,
                           tiles=options.get("tiles", self.tiles))

    def qaoa_cost_phase(self, state, cost, gamma):
        ops.run_pass(state, [], direct=(cost, float(gamma)), tiles=self.tiles)

    def qaoa_mixer(self, state, beta, n):
        """``prod_w RX_w(2 beta)`` as ``W D W / 2**n`` (``D = exp(-i beta sum_i Z_i)`` in the
        Hadamard basis, looked up from ``sum_i Z_i``)."""
        key = (n, state.device)
        if key not in self._zsums:
            from qhybrid.qaoa.torch_engine import zsum

            self._zsums[key] = zsum(n, state.device).contiguous()
        vals = torch.arange(-n, n + 1, dtype=torch.float64, device=state.device)
        table = torch.polar(torch.full_like(vals, 2.0**-n), -float(beta) * vals).to(state.dtype)
        bits = list(range(n))
        ops.walsh(state, bits, tiles=self.tiles)
        ops.run_pass(state, [], lookup=(self._zsums[key], n, table), tiles=self.tiles)
        ops.walsh(state, bits, tiles=self.tiles)

    # -- the QML layer ------------------------------------------------------------------------
    def qml_product_state(self, factors, out, scratch):
        b, n, _ = factors.shape
        state = out[: b << n].view(b, 1 << n)
        qml_ops.product_state(state, factors, tiles=self.tiles)
        return state

    def qml_forward(self, state, mats, plan, scratch):
        """``plan.gates`` in :func:`~qhybrid.sim.triton.qml_ops.runs` passes (consecutive gates on
        distinct targets, controlled or not, one pass per run)."""
        qml_ops.apply_gates(state, plan.gates, mats, plan.n_wires, tiles=self.tiles)

    def qml_sweep(self, state, lam, mats, plan, scratch, spare=None):
        """One two-state pass per run, backwards: ``psi`` and ``lam`` undone together, each gate's
        sums read in the same pass."""
        out = qml_ops.adjoint_gates(state, lam, plan.gates, mats, plan.n_wires, tiles=self.tiles)
        return (2 * out).to(mats.dtype)

    def qml_factor_gradients(self, lam, factors):
        """One pass over ``lam`` (:func:`~qhybrid.sim.triton.qml_ops.factor_sums`), then the torch
        reference's contraction on its two small results (``2**high`` and ``2**(n - high)`` per sample)."""
        from qhybrid.sim import batchedtorch

        s, t, high = qml_ops.factor_sums(lam, factors, tiles=self.tiles)
        f = factors.detach().to(torch.complex128)
        low = batchedtorch.factor_gradients(t, f[:, high:])
        if high:
            low = torch.cat([batchedtorch.factor_gradients(s, f[:, :high]), low], dim=1)
        return low.to(factors.dtype)
