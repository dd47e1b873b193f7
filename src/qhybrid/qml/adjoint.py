"""Batched simulation and adjoint differentiation of a product state followed by 2x2 gates.

The circuit seen by this module (the derivation is in ``adjoint.md``):

    |psi_0> = v_0 (x) v_1 (x) ... (x) v_{n-1}        one 2-vector per wire and sample
    |psi_k> = U_k |psi_{k-1}>                         single-qubit or controlled 2x2 gates
    f       = <psi_G| O (x) 1 |psi_G>                  O: 2x2 Hermitian on wire 0

States are ``(B, 2**n)`` tensors, wire 0 the most significant bit. The kernels are the
kernel set's (:class:`qhybrid.sim.kernels.KernelSet`, chosen once by the layer): on the numba
set a chunk runs :mod:`qhybrid.sim.batched` directly on planar states (serial kernels on the
engine's threads, two states a sample); on the others through ``KernelSet.qml_forward`` /
``qml_sweep`` / ``qml_factor_gradients`` (the torch reference's :mod:`qhybrid.sim.batchedtorch`,
any device; Triton). State buffers are kept in a :class:`qhybrid.sim.cache.Cache` owned by the layer.

**Chunks.** A call cuts its batch into chunks of at most ``chunk`` samples
(:func:`plan_chunk`, from :func:`qhybrid.sim.memory.chunk_size`: the free memory, a byte
budget, the user's cap), and keeps only one chunk's states alive: ``STATES_PER_SAMPLE``
full states per sample of the chunk. No state outlives its chunk: when gradients are wanted,
the adjoint sweep runs *in the forward call*, chunk by chunk, with a unit output gradient,
and keeps each sample's small Jacobians (per gate ``(2, 2)``, per wire ``(2,)``). The output
is real, so the sweep is linear in the output gradient ``g``: ``backward`` only contracts
the Jacobians with ``g``. A step's loss and gradients are thus those of the unchunked
call, whatever the chunk (to rounding).

:class:`CircuitExpval` is a ``torch.autograd.Function`` whose inputs are the
*matrices* (``factors``, ``mats``, ``obs``): the sweep (one pass back through the
gates, uncomputing ``psi`` and carrying ``lambda``) gives the gradient of each matrix
entry; autograd then chains it to the angles that built the matrices. Per-sample
matrices (the factors, which hold the input angles) get per-sample gradients; shared
ones are summed over the batch.

These functions trust their inputs (the layer validates).
"""
from __future__ import annotations

import ctypes
import sys
from dataclasses import dataclass, field

import torch

from qhybrid.sim import batchedtorch
from qhybrid.sim.kernels import KernelSet, as_kernel_set
from qhybrid.sim.memory import QML_STATES_PER_SAMPLE, available_bytes, chunk_size

#: Full states one sample of a chunk holds, by kernel set name and gradient (the engine's one table)
STATES_PER_SAMPLE = QML_STATES_PER_SAMPLE


def states_per_sample(kernels: KernelSet, grad: bool) -> int:
    """Full states one sample of a chunk holds on ``kernels``: the table's row, else (a set
    running the generic chunk, e.g. Triton) the torch set's."""
    return STATES_PER_SAMPLE.get((kernels.name, grad), STATES_PER_SAMPLE["torch", grad])


@dataclass(frozen=True)
class Plan:
    """The gate sequence after the product state.

    Attributes:
        n_wires: number of wires.
        gates: one ``(control, target)`` per gate; ``control = -1`` for an
            uncontrolled single-qubit gate on ``target``.
    """

    n_wires: int
    gates: tuple[tuple[int, int], ...]
    _layout: list = field(default_factory=list, init=False, repr=False, compare=False)

    def layout(self):
        """The numba kernels' cache blocks of the gates (:func:`qhybrid.sim.batched.blocks`), once."""
        if not self._layout:
            from qhybrid.sim import batched

            self._layout.append(batched.blocks(self.n_wires, self.gates))
        return self._layout[0]


def choose_kernels(kernels, device: torch.device) -> KernelSet:
    """The kernel set for tensors on ``device``: a KernelSet or a name as is, ``"auto"`` / None
    the default (numba on CPU when installed, a one-line notice when not; else torch)."""
    return as_kernel_set(None if kernels == "auto" else kernels, device.type)


def plan_chunk(batch: int, n: int, like: torch.Tensor, kernels: KernelSet | str | None, cache=None, *,
               grad: bool = True, max_samples: int | None = None, share: float = 1.0) -> int:
    """Samples per chunk for a call on ``batch`` samples of ``n`` wires (:func:`qhybrid.sim.memory.chunk_size`:
    the buffers ``cache`` holds count as free, as they are reused); ``kernels`` as :func:`choose_kernels`.

    Raises:
        MemoryLimitError: when one sample's states do not fit.
    """
    held = cache.nbytes if cache is not None else 0
    ks = choose_kernels(kernels, like.device)
    return chunk_size(n, batch=batch, dtype=like.dtype, states_per_sample=states_per_sample(ks, grad),
                      device=like.device, available=available_bytes(like.device), held=held,
                      max_samples=max_samples, share=share)


def _buffers(cache, count: int, numel: int, like: torch.Tensor) -> list[torch.Tensor]:
    """``count`` flat buffers of at least ``numel`` elements: the cache's when large enough (a
    larger one is used by its start), else new ones replacing them (never two sizes kept)."""
    kept = cache.pop("qml.states") if cache is not None else None
    kept = list(kept or ())
    if kept and (kept[0].numel() < numel or kept[0].dtype != like.dtype or kept[0].device != like.device):
        kept = []  # dropped before the new ones are allocated
    while len(kept) < count:
        kept.append(new_buffer(numel if not kept else kept[0].numel(), like))
    return kept


def new_buffer(numel: int, like: torch.Tensor) -> torch.Tensor:
    """One state buffer of ``numel`` elements of ``like``'s dtype on its device, not yet touched (huge
    pages asked for on a CPU): what the layer allocates, and what the calibration times the first
    touch of (``calibrate_qml.measure_touch``)."""
    buf = torch.empty(numel, dtype=like.dtype, device=like.device)
    _huge_pages(buf)
    return buf


HUGE_PAGE = 2 << 20
MADV_HUGEPAGE = 14


def _huge_pages(buf: torch.Tensor) -> None:
    """Ask Linux for transparent huge pages under a large CPU state buffer (before its first
    touch; THP in "madvise" mode): the cache blocks read rows of a chunk far apart in the state,
    one 4 KiB page each, and 2 MiB pages keep them in the TLB. Nothing happens elsewhere."""
    nbytes = buf.numel() * buf.element_size()
    if buf.device.type != "cpu" or nbytes < 4 * HUGE_PAGE or not sys.platform.startswith("linux"):
        return
    start = (buf.data_ptr() + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1)
    end = (buf.data_ptr() + nbytes) & ~(HUGE_PAGE - 1)
    try:
        ctypes.CDLL(None).madvise(ctypes.c_void_p(start), ctypes.c_size_t(end - start), MADV_HUGEPAGE)
    except (OSError, AttributeError):  # no libc madvise: ordinary pages
        pass


def _numel(numba: bool, chunk: int, n: int, like: torch.Tensor) -> int:
    """Elements of ``like``'s dtype per state buffer for ``chunk`` samples of ``n`` wires: the numba
    set's planes carry a pad per plane (:func:`qhybrid.sim.batched.plane_len`)."""
    if not numba:
        return chunk << n
    from qhybrid.sim import batched

    return chunk * batched.plane_len(1 << n, like.element_size() // 2)


def _keep(cache, bufs) -> None:
    if cache is not None:
        cache.put("qml.states", tuple(bufs), sum(b.numel() * b.element_size() for b in bufs))


def _numba_chunk(ks: KernelSet, factors, mats, obs, plan: Plan, bufs, grad: bool):
    """One chunk on the numba set, straight on :mod:`qhybrid.sim.batched`, in two state buffers
    (``psi`` and ``lambda`` as planes; no complex copy of either): ``(out, rho, jm, jf)``
    (Jacobians None without ``grad``)."""
    from qhybrid.sim import batched

    b, n, _ = factors.shape
    size = 1 << n
    one, two = (buf.numpy() for buf in bufs[:2])
    real = one.real.dtype
    psi = batched.as_planes(one, b, size, real)
    factors_np, mats_np = factors.detach().numpy(), mats.detach().numpy()
    batched.product(psi, factors_np)
    batched.run(psi, mats_np, plan.layout())
    lam = batched.as_planes(two, b, size, real) if grad else None
    rho = torch.from_numpy(batched.observe(psi, lam, obs.detach().numpy())).to(factors.dtype)
    out = (rho * obs).sum(dim=(1, 2)).real
    if not grad:
        return out, rho, None, None
    jm = torch.from_numpy(2 * batched.sweep(psi, lam, mats_np, plan.layout()))
    left = one.reshape(-1)[: b * size].reshape(b, size)  # psi is spent: the scratch of the factor gradients
    jf = batched.factor_gradients(lam, factors_np, left)
    return out, rho, jm, torch.from_numpy(jf)


def _set_chunk(ks: KernelSet, factors, mats, obs, plan: Plan, bufs, grad: bool):
    """One chunk through the kernel set's QML methods (``psi``, scratch and, with ``grad``,
    ``lambda`` buffers): ``(out, rho, jm, jf)`` (Jacobians None without ``grad``)."""
    b, n, _ = factors.shape
    psi, scratch = bufs[0][: b << n], bufs[1][: b << n]
    state = ks.qml_product_state(factors, psi, scratch)
    ks.qml_forward(state, mats, plan, scratch)
    head = state.view(b, 2, 1 << (n - 1))
    rho = torch.bmm(head.conj(), head.transpose(1, 2))  # rho[b, a, c] = sum conj(psi_a) psi_c
    out = (rho * obs).sum(dim=(1, 2)).real
    if not grad:
        return out, rho, None, None
    lam = bufs[2][: b << n].view(b, 1 << n)
    torch.matmul(obs, head, out=lam.view(head.shape))
    jm = ks.qml_sweep(state, lam, mats, plan, scratch)
    return out, rho, jm, ks.qml_factor_gradients(lam, factors)


class CircuitExpval(torch.autograd.Function):
    """``f[b] = <psi_b| O |psi_b>`` with adjoint gradients for factors, mats and obs.

    ``apply(factors, mats, obs, plan, cache, kernels, chunk)``: ``cache`` (a
    :class:`qhybrid.sim.cache.Cache`, or None) keeps the state buffers between calls;
    ``kernels`` the kernel set (a KernelSet, a name, or None / ``"auto"`` for the default);
    ``chunk``: samples simulated at once (None: :func:`plan_chunk`'s answer).
    """

    @staticmethod
    def forward(ctx, factors, mats, obs, plan, cache, kernels=None, chunk=None):
        b, n, _ = factors.shape
        ks = choose_kernels(kernels, factors.device)
        grad = any(ctx.needs_input_grad[:3])
        if chunk is None:
            chunk = plan_chunk(b, n, factors, ks, cache, grad=grad)
        chunk = max(1, min(int(chunk), b))
        numba = ks.name == "numba"
        bufs = _buffers(cache, states_per_sample(ks, grad) if numba else 2 + grad, _numel(numba, chunk, n, factors),
                        factors)
        run = _numba_chunk if numba else _set_chunk
        parts = [run(ks, factors[i:i + chunk], mats, obs, plan, bufs, grad) for i in range(0, b, chunk)] or [(
            factors.real.new_zeros(0), factors.new_zeros((0, 2, 2)), mats.new_zeros((0,) + tuple(mats.shape)),
            factors.new_zeros((0, n, 2)))]  # an empty batch
        _keep(cache, bufs)
        out, rho = torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])
        if grad:
            ctx.save_for_backward(rho, torch.cat([p[2] for p in parts]), torch.cat([p[3] for p in parts]))
            ctx.dtypes = (factors.dtype, mats.dtype)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        rho, jm, jf = ctx.saved_tensors
        g = grad_out.to(rho.dtype)
        grad_obs = (g[:, None, None] * rho.conj()).sum(0)
        grad_mats = torch.einsum("b,bgij->gij", g.to(jm.dtype), jm).to(ctx.dtypes[1])
        grad_factors = (g.to(jf.dtype)[:, None, None] * jf).to(ctx.dtypes[0])
        return grad_factors, grad_mats, grad_obs, None, None, None, None
