"""QAOA energy and adjoint gradient in plain torch: the reference, on CPU or CUDA.

The circuit is PennyLane's: ``H^{\\otimes n}|0>``, then for each layer
``exp(-i gamma_l C)`` and ``exp(-i beta_l sum_i X_i)`` (RX(2 beta) on every
wire), measured with ``<C>``. The mixer is applied as ``W D' W`` with ``W`` the
unnormalised Walsh–Hadamard transform and ``D'(z) = exp(-i beta sum_i Z_i(z)) / 2**n``;
Max-Cut runs on the half of the state with wire 0 = 0 (flip symmetry). See
``ADJOINT.md``. States are ``(B, 2**n_eff)``: one row per parameter set. A CPU cost diagonal (numpy) is
shared with torch, not copied.

These functions trust their inputs (validated by :class:`~qhybrid.qaoa.QAOA`).
"""
from __future__ import annotations

import torch

from qhybrid.qaoa.problem import CostDiagonal

_REAL = {torch.complex64: torch.float32, torch.complex128: torch.float64}


def is_symmetric(diag: CostDiagonal) -> bool:
    """Max-Cut costs are invariant under flipping every bit: simulate the half with wire 0 = 0."""
    return diag.problem == "maxcut" and diag.n >= 2


def zsum(n: int, device, *, symmetric: bool = False) -> torch.Tensor:
    """``sum_i Z_i`` in the Hadamard basis as int8 over the simulated index.

    Plain: ``n - 2 popcount(z)`` over ``n`` bits. Symmetric (half of ``n`` qubits, index ``y``
    on ``n - 1`` bits, full index ``(parity(y), y)``): ``n - 2 popcount(y) - 2 parity(y)``.
    """
    m = n - 1 if symmetric else n
    acc = torch.full((2**m,), n, dtype=torch.int8, device=device)
    par = torch.zeros((2**m,), dtype=torch.int8, device=device)
    for i in range(m):
        acc.view(2**i, 2, 2 ** (m - i - 1))[:, 1] -= 2
        par.view(2**i, 2, 2 ** (m - i - 1))[:, 1] ^= 1
    if symmetric:
        acc -= 2 * par
    return acc


def _hadamard(k: int, dtype, device) -> torch.Tensor:
    h = torch.ones((1, 1), dtype=dtype, device=device)
    base = torch.tensor([[1.0, 1.0], [1.0, -1.0]], dtype=dtype, device=device)
    for _ in range(k):
        h = torch.kron(h, base)
    return h


def wht(state: torch.Tensor, n: int, *, group: int = 6) -> torch.Tensor:
    """Unnormalised Walsh–Hadamard transform over ``n`` bits of each row; returns a new tensor.

    Applied as ``ceil(n / group)`` real matmuls with a ``2**k x 2**k`` Hadamard matrix.
    """
    batch = state.shape[0]
    x = torch.view_as_real(state)  # (B, N, 2)
    lo = 0
    while lo < n:
        k = min(group, n - lo)
        h = _hadamard(k, x.dtype, state.device)
        x = torch.matmul(h, x.reshape(batch * 2 ** (n - lo - k), 2**k, 2 ** (lo + 1)))
        lo += k
    return torch.view_as_complex(x.reshape(batch, 2**n, 2).contiguous())


def _tensor(a):
    """A cost diagonal's array as a torch tensor (numpy arrays shared, not copied)."""
    if a is None or isinstance(a, torch.Tensor):
        return a
    return torch.from_numpy(a)


class Prepared:
    """What a sweep needs (built once per problem and dtype), restricted to the simulated half for Max-Cut."""

    def __init__(self, diag: CostDiagonal, dtype):
        self.n, self.dtype = diag.n, dtype
        self.symmetric = is_symmetric(diag)
        self.m = self.n - 1 if self.symmetric else self.n
        self.size = 2**self.m
        self.fold = 2.0 if self.symmetric else 1.0
        index, levels, values = (_tensor(a) for a in (diag.index, diag.levels, diag.values))
        self.index = index[: self.size].long() if index is not None else None
        self.levels = levels
        self.values = values[: self.size] if values is not None else None
        self.device = (index if index is not None else values).device
        self.cost = (self.levels[self.index] if self.index is not None else self.values)  # float64
        self.cost_r = self.cost.to(_REAL[dtype])
        self.zs = zsum(self.n, self.device, symmetric=self.symmetric)
        self.zs_r = self.zs.to(_REAL[dtype])

    def phase(self, gamma: torch.Tensor) -> torch.Tensor:
        """exp(-i gamma_b C) as (B, size), by table lookup when C is on an integer grid."""
        g = gamma.to(torch.float64)[:, None]
        if self.index is not None:
            table = torch.polar(torch.ones_like(g * self.levels), -g * self.levels).to(self.dtype)
            return table[:, self.index]
        ang = -g * self.values[None, :]
        return torch.polar(torch.ones_like(ang), ang).to(self.dtype)

    def mixer_diag(self, beta: torch.Tensor) -> torch.Tensor:
        """D'(z) = exp(-i beta zsum(z)) / size as (B, size), from a (B, 2n+1) table."""
        vals = torch.arange(-self.n, self.n + 1, dtype=torch.float64, device=self.device)
        ang = -beta.to(torch.float64)[:, None] * vals
        table = torch.polar(torch.full_like(ang, 1.0 / self.size), ang).to(self.dtype)
        return table[:, (self.zs.long() + self.n)]


def _forward(pr: "Prepared", params: torch.Tensor) -> torch.Tensor:
    psi = torch.full((params.shape[0], pr.size), 2.0 ** (-pr.n / 2), dtype=pr.dtype, device=pr.device)
    for layer in range(params.shape[2]):
        psi = psi * pr.phase(params[:, 0, layer])
        psi = wht(wht(psi, pr.m) * pr.mixer_diag(params[:, 1, layer]), pr.m)
    return psi


def prepare(diag: CostDiagonal, dtype=torch.complex128) -> Prepared:
    """The per-problem tensors of a sweep (cost values, Hadamard-basis sum Z), to reuse across calls."""
    return Prepared(diag, dtype)


def forward(diag: CostDiagonal, params: torch.Tensor, *, dtype=torch.complex128, prepared=None) -> torch.Tensor:
    """Final states ``(B, 2**n)`` (full, wire 0 most significant) for ``params`` of shape ``(B, 2, p)``."""
    pr = prepared or Prepared(diag, dtype)
    psi = _forward(pr, params)
    if pr.symmetric:  # psi(1 z') = psi(0 not z')
        psi = torch.cat([psi, psi.flip(1)], dim=1)
    return psi


def energy(diag: CostDiagonal, params: torch.Tensor, *, dtype=torch.complex128, prepared=None) -> torch.Tensor:
    """``<C>`` per parameter set, float64 ``(B,)``."""
    pr = prepared or Prepared(diag, dtype)
    psi = _forward(pr, params)
    return pr.fold * (psi.abs().square().to(torch.float64) * pr.cost).sum(dim=1)


def energy_and_grad(diag: CostDiagonal, params: torch.Tensor, *, dtype=torch.complex128, prepared=None,
                    stored: bool = False):
    """``(<C> (B,), d<C>/dparams (B, 2, p))`` by one forward and one adjoint sweep.

    ``stored=False``: un-apply both states (2 states' memory plus temporaries, 6p transforms);
    ``stored=True``: keep the forward's intermediate states and un-apply lambda alone
    (about 2p more states, 4p transforms). See ADJOINT.md.
    """
    pr = prepared or Prepared(diag, dtype)
    if stored:
        return _energy_and_grad_stored(pr, params)
    p = params.shape[2]
    psi = _forward(pr, params)
    e = pr.fold * (psi.abs().square().to(torch.float64) * pr.cost).sum(dim=1)
    lam = psi * pr.cost_r
    grad = torch.zeros(params.shape, dtype=torch.float64, device=pr.device)
    for layer in reversed(range(p)):
        psi, lam = wht(psi, pr.m), wht(lam, pr.m)
        inner = (lam.conj() * pr.zs_r * psi).sum(dim=1).imag.to(torch.float64)
        grad[:, 1, layer] = 2.0 * pr.fold * inner / pr.size
        dconj = pr.mixer_diag(params[:, 1, layer]).conj()
        psi, lam = wht(psi * dconj, pr.m), wht(lam * dconj, pr.m)
        grad[:, 0, layer] = 2.0 * pr.fold * (lam.conj() * pr.cost_r * psi).sum(dim=1).imag.to(torch.float64)
        if layer:
            ph = pr.phase(params[:, 0, layer]).conj()
            psi, lam = psi * ph, lam * ph
    return e, grad


def _energy_and_grad_stored(pr: Prepared, params: torch.Tensor):
    p = params.shape[2]
    amp = 2.0 ** (-pr.n / 2)
    psi = torch.full((params.shape[0], pr.size), amp, dtype=pr.dtype, device=pr.device)
    after_phase, hats = [], []
    for layer in range(p):
        psi = psi * pr.phase(params[:, 0, layer])
        after_phase.append(psi if layer else None)  # layer 1's is amp * phase: recomputed
        hat = wht(psi, pr.m) * pr.mixer_diag(params[:, 1, layer])
        hats.append(hat)
        psi = wht(hat, pr.m)
    e = pr.fold * (psi.abs().square().to(torch.float64) * pr.cost).sum(dim=1)
    lam = psi * pr.cost_r
    del psi
    grad = torch.zeros(params.shape, dtype=torch.float64, device=pr.device)
    for layer in reversed(range(p)):
        lam = wht(lam, pr.m)
        hat = hats.pop()
        grad[:, 1, layer] = 2.0 * pr.fold * (lam.conj() * pr.zs_r * hat).sum(dim=1).imag.to(torch.float64)
        del hat
        lam = wht(lam * pr.mixer_diag(params[:, 1, layer]).conj(), pr.m)
        ph = pr.phase(params[:, 0, layer])
        before = after_phase.pop() if layer else amp * ph
        grad[:, 0, layer] = 2.0 * pr.fold * (lam.conj() * pr.cost_r * before).sum(dim=1).imag.to(torch.float64)
        del before
        if layer:
            lam = lam * ph.conj()
    return e, grad


class TorchQAOA:
    """The torch set's QAOA engine (``KernelSet.qaoa_engine``), on CPU or CUDA: numpy parameters
    in, numpy results out (only the ``k`` winners of :meth:`top` leave the device).

    ``STORE_TORCH``: use the stored-state sweep when its ~(2p + 6) states fit (else un-apply).
    """

    STORE_TORCH = True

    def __init__(self, diagonal: CostDiagonal, *, dtype: str, device, memory_limit: int | None = None):
        self.diagonal, self.device, self._limit = diagonal, device, memory_limit
        self.dtype = dtype
        self.torch_dtype = getattr(torch, dtype)
        self._prep = None

    def prepared(self) -> Prepared:
        if self._prep is None:
            self._prep = prepare(self.diagonal, self.torch_dtype)
        return self._prep

    def stored(self, p: int) -> bool:
        """Whether the stored-state sweep's ~(2p + 6) states fit the limit."""
        from qhybrid.qaoa import memory

        pr = self.prepared()
        need = (2 * p + 6) * memory.state_bytes(pr.m, self.dtype)
        limit = self._limit if self._limit is not None else memory.available_bytes(self.device) // 2
        return self.STORE_TORCH and need <= limit

    def _tensor(self, arr):
        return torch.as_tensor(arr, device=self.device)

    def energy(self, arr):
        e = energy(self.diagonal, self._tensor(arr), dtype=self.torch_dtype, prepared=self.prepared())
        return e.cpu().numpy()

    def energy_and_grad(self, arr) -> list:
        out = []
        for a in arr:  # one parameter set at a time keeps the reference's temporaries bounded
            e, g = energy_and_grad(self.diagonal, self._tensor(a[None]), dtype=self.torch_dtype,
                                   prepared=self.prepared(), stored=self.stored(a.shape[1]))
            out.append((float(e[0]), g[0].cpu().numpy()))
        return out

    def _state(self, arr):
        return forward(self.diagonal, self._tensor(arr[:1]), dtype=self.torch_dtype, prepared=self.prepared())[0]

    def state(self, arr):
        return self._state(arr).cpu().numpy()

    def top(self, arr, k: int) -> list:
        probs = self._state(arr).abs().square().to(torch.float64)
        top = torch.topk(probs, min(k, probs.numel()))
        return list(zip(top.values.tolist(), top.indices.tolist()))
