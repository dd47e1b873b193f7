"""The numba kernel set (CPU): the engine's compiled kernels, through the numba registry.

General circuits: :mod:`.numba_circuits` (loaded on first use: it imports torch) over the
registered kernels of :mod:`qhybrid.sim.fastkernels`, :mod:`~qhybrid.sim.fastplanar`,
:mod:`~qhybrid.sim.fastgrad`, :mod:`~qhybrid.sim.fastobs` (:mod:`qhybrid.sim.registry`:
compiled on first use, serial or threaded by size); the fused adjoint steps of
:mod:`qhybrid.sim.adjoint_steps`. QAOA: the planned fused sweep of :mod:`qhybrid.qaoa.sweep`
(numpy and numba alone: this module imports no torch). The QML layer: :mod:`qhybrid.sim.batched`
(planar states). What the numba kernels do not cover falls back to the torch reference.
"""
from __future__ import annotations

import importlib

from .base import KernelSet, KernelSetUnavailable

_MODULES: dict = {}


def _mod(name: str):
    m = _MODULES.get(name)
    if m is None:
        m = _MODULES[name] = importlib.import_module(name)
    return m


def _c():
    """The general-circuit functions (:mod:`.numba_circuits`)."""
    m = _MODULES.get("c")
    if m is None:
        m = _MODULES["c"] = importlib.import_module("qhybrid.sim.kernels.numba_circuits")
    return m


def _torch_set():
    from . import get_kernel_set

    return get_kernel_set("torch")


class NumbaKernels(KernelSet):
    """numba on CPU (see :class:`~.base.KernelSet`)."""

    name = "numba"
    device_types = ("cpu",)
    fused_ladders = True

    def __init__(self):
        from qhybrid.sim.jit import HAVE_NUMBA

        if not HAVE_NUMBA:
            raise KernelSetUnavailable("kernel set 'numba' needs numba, which is not installed (pip install numba)")

    @property
    def adjoint_steps(self):
        return _mod("qhybrid.sim.adjoint_steps")

    # -- gates --------------------------------------------------------------------------------
    def apply_dense(self, state, matrix, wires, n):
        _c().apply_dense(state, matrix, wires, n)

    def apply_swap(self, state, wires, ctrl, n):
        _c().apply_swap(state, wires, ctrl, n)

    def apply_diagonal(self, state, diagonal, wires, n):
        _c().apply_diagonal(state, diagonal, wires, n)

    def phase_lookup(self, state, table, index):
        _c().phase_lookup(state, table, index)

    def apply_permutation(self, state, step, n, *, cache=None):
        _c().apply_permutation(state, step, n, cache)

    def permute_into(self, out, state, step):
        _c().permute_into(out, state, step)

    def apply_layer(self, state, step, n, *, perm=None, src=None, after=None, spare=None):
        return _c().apply_layer(state, step, n, perm, src, after, spare)

    def walsh_hadamard(self, state, wires, n):
        walsh = _mod("qhybrid.sim.walsh")
        arr = state.numpy()
        for row in arr:
            f = row.view(row.real.dtype)  # re / im interleaved: a wire of stride s is float stride 2 s
            for w in wires:
                h = 2 << (n - 1 - w)
                walsh.wht_range(f, 0, f.shape[0], h, 2 * h)

    # -- observables and inner products -----------------------------------------------------
    def weighted_norm(self, state, weights):
        return _c().weighted_norm(state, weights)

    def pauli_expval(self, state, x, z):
        return _c().pauli_expval(state, x, z)

    def diag_mul_into(self, out, state, weights):
        _c().diag_mul_into(out, state, weights)

    def pauli_sum_into(self, out, state, terms):
        _c().pauli_sum_into(out, state, terms)

    def vdot_real(self, ket, bra):
        return _c().vdot_real(ket, bra)

    def generator_overlap(self, bra, ket, gen, wires, n):
        ov = _c().generator_overlap(bra, ket, gen, wires, n)
        return ov if ov is not None else _torch_set().generator_overlap(bra, ket, gen, wires, n)

    # -- QAOA ---------------------------------------------------------------------------------
    def qaoa_engine(self, diagonal, *, dtype, device, symmetric, memory_limit=None, **options):
        return _mod("qhybrid.qaoa.sweep").NumbaQAOA(diagonal, dtype=dtype, symmetric=symmetric,
                                                     memory_limit=memory_limit, **options)

    def qaoa_cost_phase(self, state, cost, gamma):
        import numpy as np

        c = cost.numpy()
        ph = np.exp(-1j * gamma * c).astype(state.numpy().dtype)
        state.numpy()[:] *= ph

    def qaoa_mixer(self, state, beta, n):
        import numpy as np

        c, s = np.cos(beta), -1j * np.sin(beta)
        for w in range(n):
            m = np.array([[[c, s], [s, c]]], dtype=state.numpy().dtype)
            _mod("qhybrid.sim.registry").kernel("apply_1q", state.shape[1])(state.numpy(), m, 1 << (n - 1 - w))

    # -- the QML layer ------------------------------------------------------------------------
    def qml_forward(self, state, mats, plan, scratch):
        batched = _mod("qhybrid.sim.batched")
        arr = state.numpy()
        planes = batched.to_planes(arr, scratch.numpy())
        batched.run(planes, mats.detach().numpy(), plan.layout())
        batched.from_planes(planes, arr)

    def qml_sweep(self, state, lam, mats, plan, scratch, spare=None):
        import torch

        batched = _mod("qhybrid.sim.batched")
        larr = lam.numpy()
        planes = batched.to_planes(state.numpy(), (spare if spare is not None else torch.empty_like(state)).numpy())
        lam_planes = batched.to_planes(larr, scratch.numpy())
        grads = batched.sweep(planes, lam_planes, mats.detach().numpy(), plan.layout())
        batched.from_planes(lam_planes, larr)
        return torch.from_numpy(2 * grads).to(mats.dtype)

    def qml_factor_gradients(self, lam, factors):
        import torch

        batched = _mod("qhybrid.sim.batched")
        arr = lam.numpy()
        planes = batched.to_planes(arr, torch.empty_like(lam).numpy())
        return torch.from_numpy(batched.factor_gradients(planes, factors.detach().numpy(), left=arr))
