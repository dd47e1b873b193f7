"""`FusedSweep`: the fused CPU sweep of one QAOA instance (numba kernels in ``numba_kernels``).

Plans the cache-block layout (``layout``), holds the preallocated state buffers (``Buffers``)
and runs the forward sweep and the two adjoint sweeps (stored states / un-apply, see
``ADJOINT.md``) on the kernels. It trusts its inputs: ``QAOA`` validates them. numpy and
numba alone: never torch.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from qhybrid.qaoa import memory
from qhybrid.qaoa.problem import CostDiagonal

_NUMPY = {"complex128": (np.complex128, np.float64), "complex64": (np.complex64, np.float32)}


def popcount(m: int) -> np.ndarray:
    """popcount of 0..2**m-1."""
    pop = np.zeros(1, dtype=np.int64)
    for _ in range(m):
        pop = np.concatenate([pop, pop + 1])
    return pop


#: Bits of the high pass at most (``2**HIGH_BITS`` rows a tile) when no block_bits is given: a larger
#: state grows its blocks instead. Each tile row is a run of ``tile_width`` amplitudes gathered from
#: ``2**low_bits`` apart; with more rows the runs shrink to one cache line each (4 complex128 at 28
#: nodes with 2**14-amplitude blocks), which the hardware prefetchers do not follow: measured on the
#: 2-core Xeon, the high passes went from 6-9 ns per amplitude at 20-24 nodes to 23-39 at 28
#: (``benchmarks/qaoa_passes.py --block-bits 14 0``: the layout before the cap beside this one).
HIGH_BITS = 9


def layout(n_eff: int, dtype: str, *, block_bits: int | None = None,
           tile_width: int | None = None, high_bits: int | None = None) -> tuple[int, int, int]:
    """``(low_bits, tile_width, threads)`` for a ``2**n_eff``-amplitude state: ``2**low_bits``
    amplitudes a block (the low pass), tiles of ``tile_width`` columns (the high pass) and the
    engine's thread count (rows of tile scratch). Without ``block_bits`` the blocks grow past
    their cache-sized default so that the high pass has at most :data:`HIGH_BITS` bits;
    ``high_bits`` sets the high pass's bits instead (tests: large blocks at small sizes)."""
    from qhybrid.qaoa import numba_kernels as nk

    if block_bits:
        kmax = block_bits
    elif high_bits:
        kmax = n_eff - high_bits
    else:
        kmax = max(14 if dtype == "complex128" else 15, n_eff - HIGH_BITS)
    k = n_eff if n_eff <= 4 else min(kmax, n_eff - 2)
    nt = nk.num_threads()
    item = memory.state_bytes(0, dtype)
    w = tile_width or max(4, min(64, (256 << 10) // (item * 2 ** max(n_eff - k, 0))))
    while w > 1 and (2**k) // w < 2 * nt:
        w //= 2
    return k, w, nt


@dataclass
class Buffers:
    """What a sweep reads and writes, made once per instance."""

    low_bits: int  # k: bits of the index inside one block (the low pass works a block at a time)
    tile_width: int  # w: columns of one high-pass tile
    threads: int  # scratch rows made (the engine's thread count at planning time)
    rows: int  # 2**(n_eff - k): blocks in the state, rows of one high-pass tile
    real: type  # the float dtype of the complex one
    cplx: type  # the complex dtype of every state
    psi: np.ndarray  # the state (the half with wire 0 = 0 under Max-Cut's symmetry)
    psi_floats: np.ndarray  # psi as interleaved floats (the kernels' view)
    lam: np.ndarray  # the adjoint state lambda = C psi, un-applied layer by layer
    lam_floats: np.ndarray  # lam as interleaved floats
    tiles: np.ndarray  # (threads, 2, rows * tile_width) per-thread tile scratch of the high pass
    tiles_floats: np.ndarray  # tiles as interleaved floats
    direct: bool  # True: ``levels`` holds the cost of each index; False: ``levels[level_index]``
    level_index: np.ndarray  # int16 cost level of each index (one zero when direct)
    levels: np.ndarray  # the distinct cost values (or each index's cost when direct)
    z_high: np.ndarray  # sum of Z over the high (row) bits, per row (with wire 0's parity under symmetry)
    z_low: np.ndarray  # (2, 2**k) sum of Z over the low bits, per column, for each high parity
    high_parity: np.ndarray  # uint8 parity of each row index
    fold: float  # 2.0 when only the symmetric half is simulated (energies and gradients doubled)
    half: int  # amplitudes simulated: len(psi)
    block_sums: np.ndarray  # one partial sum per block (energy, gamma gradients)
    thread_sums: np.ndarray  # one partial sum per thread (beta gradients)
    counter: np.ndarray  # the shared work counter threads take blocks and tiles from
    # walsh.butterflies(real), the compiled Walsh-Hadamard entry the kernels call; None until the first
    # sweep when this process has not loaded it yet (FusedSweep.run compiles the kernels first)
    butterflies: int | None
    stores: list = field(default_factory=list)  # extra states of the stored-state sweep, grown on demand


def plan(diagonal: CostDiagonal, *, symmetric: bool, dtype: str, block_bits: int | None = None,
         tile_width: int | None = None, high_bits: int | None = None) -> Buffers:
    """The layout and the buffers of ``diagonal``'s sweep (numpy allocations: large ones are
    madvised for transparent huge pages, fewer TLB misses in the strided high passes)."""
    from qhybrid.sim import walsh

    n = diagonal.n
    ne = n - 1 if symmetric else n
    k, w, nt = layout(ne, dtype, block_bits=block_bits, tile_width=tile_width, high_bits=high_bits)
    half = 2**ne
    cplx, real = _NUMPY[dtype]
    psi, lam = np.empty(half, dtype=cplx), np.empty(half, dtype=cplx)
    nh = ne - k
    rows = 2**nh
    pop_r, pop_c = popcount(nh), popcount(k)
    par_c = pop_c & 1
    if symmetric:
        # sum_i Z_i on the full index (parity(y), y) = n - 2 pop(y) - 2 parity(y), y = (r, c)
        zh = (n - 2 * pop_r).astype(np.float64)
        zl = np.stack([-2 * pop_c - 2 * (q ^ par_c) for q in (0, 1)]).astype(np.float64)
    else:
        zh = (nh - 2 * pop_r).astype(np.float64)
        zl = np.stack([k - 2 * pop_c] * 2).astype(np.float64)
    tiles = np.zeros((nt, 2, rows * w), dtype=cplx)
    d = diagonal
    # one index type (int16) for every problem keeps the kernels to one compiled version per
    # dtype; a cost span beyond int16 is looked up directly as float64 values
    direct = d.values is not None or d.index.dtype == np.int32
    if direct:
        index = np.zeros(1, dtype=np.int16)
        levels = d.values[:half] if d.values is not None else d.levels[d.index[:half]]
    else:
        index, levels = d.index[:half].astype(np.int16), d.levels
    return Buffers(
        low_bits=k, tile_width=w, threads=nt, rows=rows, real=real, cplx=cplx,
        psi=psi, psi_floats=psi.view(real), lam=lam, lam_floats=lam.view(real),
        tiles=tiles, tiles_floats=tiles.view(real), direct=direct, level_index=index, levels=levels,
        z_high=zh, z_low=zl, high_parity=(pop_r & 1).astype(np.uint8),
        fold=2.0 if symmetric else 1.0, half=half,
        block_sums=np.zeros(half >> k), thread_sums=np.zeros(nt), counter=np.zeros(1, dtype=np.int64),
        butterflies=walsh.butterflies(real) if walsh.loaded(real) else None,
    )


def _compile_only(kernel, *args) -> None:
    """A sweep's launcher that compiles (or loads) each kernel without running it: its work counter
    starts past the last block and tile, so it takes none, calls no butterflies (the address is 0)
    and leaves every state as it was (a per-thread sum of nothing at most).

    The first sweep of a process runs this way before it asks for the butterfly entry, so that
    the kernels compile here while a process compiling the entry ahead (``kernel_cache.compiling``)
    finishes it."""
    kernel(*args, 0, _DONE, 0)


_compile_only.threads = 1
_DONE = np.array([1 << 62], dtype=np.int64)  # a work counter past every block and tile


class FusedSweep:
    """Energy, adjoint gradient and final state of one instance on the fused numba kernels.

    Args:
        diagonal: the cost diagonal.
        symmetric: simulate only the half with wire 0 = 0 (Max-Cut's bit-flip symmetry).
        dtype: ``"complex128"`` or ``"complex64"``.
        block_bits, tile_width, high_bits: layout overrides (tests; None picks them from the cache sizes).
    """

    def __init__(self, diagonal: CostDiagonal, *, symmetric: bool, dtype: str,
                 block_bits: int | None = None, tile_width: int | None = None, high_bits: int | None = None):
        self.n, self.dtype = diagonal.n, dtype
        self.buffers = plan(diagonal, symmetric=symmetric, dtype=dtype, block_bits=block_bits,
                            tile_width=tile_width, high_bits=high_bits)

    def threads(self, serial_bits: int) -> int:
        """Threads a sweep's kernels run on: one for states of at most ``2**serial_bits``
        amplitudes, else the engine's count (at most the scratch rows the buffers were made with)."""
        from qhybrid.sim.pool import threads_for

        b = self.buffers
        if b.half <= 2**serial_bits:
            return 1
        return min(b.threads, threads_for(b.half))

    def final_state(self) -> np.ndarray:
        """The full final state of the last sweep (a copy)."""
        psi = self.buffers.psi
        if self.buffers.fold == 2.0:  # psi(1 z') = psi(0 not z')
            return np.concatenate([psi, psi[::-1]])
        return psi.copy()

    def stores(self, p: int, limit: int) -> list | None:
        """``2p - 1`` extra state buffers for the stored-state sweep, or None when the sweep's
        states would pass ``limit`` bytes."""
        b = self.buffers
        need = 2 * p - 1
        item = memory.state_bytes(0, self.dtype)
        total = (need + 2) * b.half * item + b.level_index.nbytes
        if total > limit:
            return None
        while len(b.stores) < need:
            b.stores.append(np.empty(b.half, dtype=b.cplx))
        return b.stores

    def _launcher(self, threads: int):
        """``run(kernel, *args)``: one sweep kernel on ``threads`` threads (``run.threads``)."""
        from qhybrid.qaoa import numba_kernels as nk

        counter, wht = self.buffers.counter, self.buffers.butterflies

        def run(kernel, *args):
            nk.launch(kernel, *args, wht, threads=threads, counter=counter)

        run.threads = threads
        return run

    def _table(self, g: float, dummy: np.ndarray) -> np.ndarray:
        """The cost phases ``exp(-i g level)`` per level (unused, ``dummy``, when looked up directly)."""
        b = self.buffers
        return dummy if b.direct else np.exp(-1j * g * b.levels).astype(b.cplx)

    def _mixer(self, beta: float) -> tuple[np.ndarray, np.ndarray]:
        """The mixer's diagonal in the Hadamard basis: per row (with the 1/2**n of the two
        transforms) and per column."""
        b = self.buffers
        return (np.exp(-1j * beta * b.z_high) / b.half).astype(b.cplx), np.exp(-1j * beta * b.z_low).astype(b.cplx)

    def run(self, a: np.ndarray, *, grad: bool, threads: int, store_limit: int):
        """``(energy, gradient (2, p) or None)`` for parameters ``a = [gammas, betas]``: the
        stored-state sweep when its states fit ``store_limit`` bytes, else the un-apply sweep."""
        b = self.buffers
        if b.butterflies is None:  # this process's first sweep of this dtype: kernels, then the entry
            self._sweep(a, grad=True, run=_compile_only, store_limit=store_limit)
            from qhybrid.sim import walsh

            b.butterflies = walsh.butterflies(b.real)
        return self._sweep(a, grad=grad, run=self._launcher(threads), store_limit=store_limit)

    def _sweep(self, a: np.ndarray, *, grad: bool, run, store_limit: int):
        from qhybrid.qaoa import numba_kernels as nk

        b = self.buffers
        n, k, w, half, fold = self.n, b.low_bits, b.tile_width, b.half, b.fold
        gam, bet = a[0], a[1]
        p = gam.shape[0]
        levels, index, direct = b.levels, b.level_index, b.direct
        psi, psf, lam, laf, sc, scf = b.psi, b.psi_floats, b.lam, b.lam_floats, b.tiles, b.tiles_floats
        zh, zl, pr = b.z_high, b.z_low, b.high_parity
        dummy = np.zeros(1, dtype=b.cplx)
        amp = 2.0 ** (-n / 2)
        # each layer's phase table and mixer diagonal, made once for both sweeps
        tables = [self._table(g_, dummy) for g_ in gam]
        mixers = [self._mixer(b_) for b_ in bet]
        store = self.stores(p, store_limit) if grad else None
        if store is not None:
            return self._run_stored(a, store, run, amp, tables, mixers)
        for layer in range(p):
            run(nk.fwd_low, psi, psf, k, layer == 0, index, levels, tables[layer], direct,
                gam[layer], amp, dummy, False)
            dh, dl = mixers[layer]
            run(nk.fwd_high, psi, psf, k, w, dh, dl, pr, sc, scf, dummy, False)
        run(nk.fwd_last_low, psi, psf, lam, laf, k, index, levels, direct, nk.BOTH if grad else nk.ENERGY,
            b.block_sums)
        e = fold * float(b.block_sums.sum())
        if not grad:
            return e, None
        g = np.zeros((2, p))
        for layer in reversed(range(p)):
            dh, dl = mixers[layer]
            run(nk.bwd_high, psi, psf, lam, laf, k, w, np.conj(dh), np.conj(dl), zh, zl, pr, sc, scf,
                b.thread_sums)
            g[1, layer] = 2.0 * fold * b.thread_sums[:run.threads].sum() / half
            tc = np.conj(tables[layer])
            run(nk.bwd_low, psi, psf, lam, laf, k, index, levels, tc, direct, -gam[layer], layer > 0, b.block_sums)
            g[0, layer] = 2.0 * fold * b.block_sums.sum()
        return e, g

    def _run_stored(self, a, store, run, amp, tables, mixers):
        """Forward sweep keeping psi after each cost phase (layers 2..p) and each post-D' Hadamard-basis
        state; the backward sweep then un-applies lambda alone (4p instead of 6p transforms)."""
        from qhybrid.qaoa import numba_kernels as nk

        b = self.buffers
        k, w, fold = b.low_bits, b.tile_width, b.fold
        gam, bet = a[0], a[1]
        p = gam.shape[0]
        levels, index, direct = b.levels, b.level_index, b.direct
        psi, psf, lam, laf, sc, scf = b.psi, b.psi_floats, b.lam, b.lam_floats, b.tiles, b.tiles_floats
        zh, zl, pr = b.z_high, b.z_low, b.high_parity
        hats, pcs = store[:p], [None] + store[p:]  # post-D' states per layer; psi after phase, layers 2..p
        for layer in range(p):
            keep = layer > 0
            run(nk.fwd_low, psi, psf, k, not keep, index, levels, tables[layer], direct,
                gam[layer], amp, pcs[layer] if keep else hats[0], keep)
            dh, dl = mixers[layer]
            run(nk.fwd_high, psi, psf, k, w, dh, dl, pr, sc, scf, hats[layer], True)
        run(nk.fwd_last_low, psi, psf, lam, laf, k, index, levels, direct, nk.LAM_ONLY, b.block_sums)
        e = fold * float(b.block_sums.sum())
        g = np.zeros((2, p))
        first = hats[0]  # an unused state argument of the last bwd_low_stored
        for layer in reversed(range(p)):
            dh, dl = mixers[layer]
            run(nk.bwd_high_stored, lam, laf, k, w, np.conj(dh), np.conj(dl), zh, zl, pr, hats[layer], sc, scf,
                b.thread_sums)
            g[1, layer] = 2.0 * fold * b.thread_sums[:run.threads].sum()
            tc = np.conj(tables[layer])
            run(nk.bwd_low_stored, lam, laf, k, index, levels, tc, direct, -gam[layer], layer > 0, layer == 0,
                pcs[layer] if layer else first, amp, b.block_sums)
            g[0, layer] = 2.0 * fold * b.block_sums.sum()
        return e, g


#: Amplitudes ranked at a time by :func:`top_of`: its temporaries stay a few MiB whatever the state's size
#: (ranking a 2**29-amplitude half at once made three 4 GiB float64 arrays, more than the state itself).
TOP_CHUNK = 1 << 20


def top_of(psi: np.ndarray, k: int, *, chunk: int | None = None) -> list[tuple[float, int]]:
    """The ``k`` largest ``(probability, index)`` pairs of the state ``psi``, largest first (equal
    probabilities: the lower index first), ranked ``chunk`` amplitudes at a time: each chunk's best
    ``k`` (its own ``|psi|**2`` in float64) are merged with those kept so far, so no state-sized
    temporary is made (``chunk``: default :data:`TOP_CHUNK`)."""
    k, chunk = min(k, psi.size), chunk or TOP_CHUNK
    kept_p, kept_i = np.empty(0), np.empty(0, dtype=np.int64)
    for start in range(0, psi.size, chunk):
        part = psi[start:start + chunk]
        probs = part.real.astype(np.float64) ** 2 + part.imag.astype(np.float64) ** 2
        best = np.argpartition(-probs, k - 1)[:k] if probs.size > k else np.arange(probs.size)
        kept_p = np.concatenate([kept_p, probs[best]])
        kept_i = np.concatenate([kept_i, best + start])
        order = np.lexsort((kept_i, -kept_p))[:k]
        kept_p, kept_i = kept_p[order], kept_i[order]
    return [(float(p), int(i)) for p, i in zip(kept_p, kept_i)]


class NumbaQAOA:
    """The numba set's QAOA engine (``KernelSet.qaoa_engine``): the :class:`FusedSweep`, planned
    on first use; numpy in, numpy out.

    Attributes (tuning, read at each call): ``STORE_BUDGET`` bytes of state buffers the
    stored-state sweep may hold when no ``memory_limit`` was given (None: ``memory.STORE_BUDGET``);
    ``SERIAL_BITS``: states of at most ``2**SERIAL_BITS`` amplitudes run on one thread.
    """

    STORE_BUDGET: int | None = None
    SERIAL_BITS = memory.SERIAL_BITS

    def __init__(self, diagonal: CostDiagonal, *, dtype: str, symmetric: bool, memory_limit: int | None = None,
                 block_bits: int | None = None, tile_width: int | None = None, high_bits: int | None = None):
        self.diagonal, self.dtype, self.symmetric = diagonal, dtype, symmetric
        self.n = diagonal.n
        self._limit = memory_limit
        self._layout = dict(block_bits=block_bits, tile_width=tile_width, high_bits=high_bits)
        self._sweep = None

    def fused(self) -> FusedSweep:
        """The planned sweep (layout and buffers), made on first use."""
        if self._sweep is None:
            self._sweep = FusedSweep(self.diagonal, symmetric=self.symmetric, dtype=self.dtype, **self._layout)
        return self._sweep

    def threads(self) -> int:
        """Threads a sweep's kernels run on (one up to ``2**SERIAL_BITS`` amplitudes)."""
        return self.fused().threads(self.SERIAL_BITS)

    def _run(self, a: np.ndarray, *, grad: bool):
        sweep = self.fused()
        budget = memory.STORE_BUDGET if self.STORE_BUDGET is None else self.STORE_BUDGET
        limit = self._limit if self._limit is not None else budget
        return sweep.run(a, grad=grad, threads=sweep.threads(self.SERIAL_BITS), store_limit=limit)

    def energy(self, arr: np.ndarray) -> np.ndarray:
        return np.array([self._run(a, grad=False)[0] for a in arr])

    def energy_and_grad(self, arr: np.ndarray) -> list:
        return [self._run(a, grad=True) for a in arr]

    def state(self, arr: np.ndarray) -> np.ndarray:
        self._run(arr[0], grad=False)
        return self._sweep.final_state()

    def top(self, arr: np.ndarray, k: int) -> list[tuple[float, int]]:
        """The ``k`` most likely indices; with the flip symmetry the half is ranked, then each index
        expanded to its flipped pair (``psi(0 y) = psi(1 not y)``)."""
        self._run(arr[0], grad=False)
        psi = self._sweep.buffers.psi  # ranked in place: no copy of the state (at 30 nodes, 8 GiB)
        if self._sweep.buffers.fold != 2.0:
            return top_of(psi, k)
        pairs = []
        for p, y in top_of(psi, (k + 1) // 2):
            pairs += [(p, y), (p, 2**self.n - 1 - y)]
        return pairs[:k]
