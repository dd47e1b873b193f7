"""Work per iteration of our engines: kernel calls, state passes, bytes moved, arithmetic, memory.

Counted from the engines' structure (``qaoa/ADJOINT.md``, ``qml/adjoint.py``), as
functions of qubits, layers, batch and dtype; tests check the call and pass
counts against what the engines really do at small sizes.

QAOA (numba, CPU), one energy+gradient on ``m`` simulated qubits (``n - 1`` for
Max-Cut, whose flip symmetry halves the state): forward ``p`` low passes (cost
phase + low butterflies) and ``p`` high passes (high butterflies, mixer
diagonal, butterflies), one last low pass (energy, ``lambda = C psi``);
backward ``p`` high and ``p`` low passes: ``4p + 1`` kernel calls over the
state. Bytes as in ``benchmarks/qaoa.py``'s ``bytes_moved`` (stored-state sweep
when its ``2p + 1`` states fit ``qaoa.memory.STORE_BUDGET``, else the un-apply sweep).
Arithmetic per amplitude: a butterfly is 2 flops per amplitude per bit, a
diagonal 6.

QAOA (torch, CUDA): the transform as ``ceil(m / 6)`` real matmuls with a 64x64
Hadamard block (128 flops per real entry per group), each a read and a write.

QML (DressedQNN, CCQC on ``n`` wires), one optimizer step on a local batch of
``B`` samples: per sample the product state, ``G`` 2x2 gates (controlled ones
touch half the state), then the adjoint sweep (uncompute psi, reduce, uncompute
lambda per gate), planar copies in and out; 14 flops per touched amplitude per
gate application, 16 per reduction. ``<Z0>`` is one product of each planar state with itself
(no temporary). The batch is simulated in chunks (``sim.memory.chunk_size``): memory is one
chunk's states, the kernel calls repeat per chunk. The job's evaluation after an epoch is the
forward pass alone (:func:`qml_eval_work`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from qhybrid.errors import SpecError

ITEM = {"complex128": 16, "complex64": 8}
RUNTIME_BYTES = 400 * 2**20  # the Python process: interpreter, torch, numba, PennyLane
# glibc's largest dynamic mmap threshold: a freed temporary up to this size is reused from the heap,
# a larger one is mapped anew and page-faulted in at every call (measured: a 16-wire evaluation of 52
# samples faults its 52 MiB head copy each time, a 16-sample step nothing)
FRESH_MIN = 32 * 2**20


def _fresh(nbytes: float) -> float:
    """``nbytes`` of a per-call temporary that is page-faulted in anew (past FRESH_MIN), else 0."""
    return float(nbytes) if nbytes > FRESH_MIN else 0.0


@dataclass(frozen=True)
class Work:
    """The work of one iteration (one optimizer step).

    Attributes:
        calls: kernel calls (CPU) or launches (GPU) per iteration.
        passes: state-sized passes per iteration (each reads and/or writes a whole state).
        bytes: bytes moved to and from memory per iteration.
        flops: arithmetic per iteration (real floating-point operations).
        memory_bytes: peak memory of the run (states, adjoint buffers, batch, the process).
        working_set_bytes: the bytes the passes cycle through (cache-resident when small).
        params: trainable parameters (the all-reduce of a data-parallel step).
        dtype: ``complex128`` or ``complex64``.
        serial_bytes: bytes moved by one thread whatever the cores (numpy's planar copies), part of ``bytes``.
        fresh_bytes: bytes of temporaries larger than ``FRESH_MIN``, mapped and page-faulted anew at every call.
    """

    calls: int
    passes: float
    bytes: float
    flops: float
    memory_bytes: int
    working_set_bytes: int
    params: int
    dtype: str = "complex128"
    serial_bytes: float = 0.0
    fresh_bytes: float = 0.0


def _check_dtype(dtype: str) -> int:
    if dtype not in ITEM:
        raise SpecError(f"dtype {dtype!r}: valid are {', '.join(ITEM)}")
    return ITEM[dtype]


def qaoa_stored(n: int, layers: int, *, dtype: str = "complex128", problem: str = "maxcut") -> bool:
    """Whether the fused sweep keeps ``2p - 1`` extra states (``QAOA._stores``) at this size."""
    from qhybrid.qaoa import memory

    m = n - 1 if (problem == "maxcut" and n >= 2) else n
    half, item = 2**m, _check_dtype(dtype)
    index = half * 2  # int16 cost index
    return (2 * layers + 1) * half * item + index <= memory.STORE_BUDGET


def qaoa_work(n: int, layers: int, *, dtype: str = "complex128", problem: str = "maxcut",
              gpu: bool = False) -> Work:
    """Work of one QAOA energy+gradient (one optimizer iteration) on ``n`` qubits, ``layers`` = p.

    Example:
        >>> qaoa_work(20, 2).calls
        9
    """
    item = _check_dtype(dtype)
    p = int(layers)
    m = n - 1 if (problem == "maxcut" and n >= 2) else n
    half = 2**m
    s = half * item
    if gpu:
        return _qaoa_torch_work(n, m, p, item, dtype)
    stored = qaoa_stored(n, p, dtype=dtype, problem=problem)
    i = half * 2
    if stored:
        forward = s + i + 3 * s + (p - 1) * (6 * s + i) + 3 * s + i
        backward = p * 3 * s + (p - 1) * (3 * s + i) + 2 * s + i
        back_flops = p * (4 * m + 28)
        extra_states = 2 * p - 1
    else:
        forward = s + i + 2 * s + (p - 1) * (4 * s + i) + 3 * s + i
        backward = p * (8 * s + i)
        back_flops = p * (8 * m + 40)
        extra_states = 0
    flops = half * (p * (4 * m + 12) + 10 + back_flops)
    states = 2 + extra_states
    from qhybrid.qaoa import memory as qaoa_memory  # the engine's own answer: the diagonal's build, then the sweep

    memory = qaoa_memory.required_bytes(n, dtype=dtype, symmetric=m != n, layers=p) + RUNTIME_BYTES
    return Work(calls=4 * p + 1, passes=(forward + backward) / s, bytes=float(forward + backward),
                flops=float(flops), memory_bytes=int(memory), working_set_bytes=states * s + i,
                params=2 * p, dtype=dtype)


def _qaoa_torch_work(n: int, m: int, p: int, item: int, dtype: str) -> Work:
    half = 2**m
    s = half * item
    groups = math.ceil(m / 6)
    wht_passes = 2 * (groups + 1)  # each matmul reads and writes; one contiguous copy at the end
    layer = 2 * wht_passes + 3 + 3 + 2 * 1.5  # two transforms, two products, two gathered diagonals
    passes = p * layer * 3 + 6  # forward, backward (psi and lambda), energy
    wht_flops = 2 * groups * 128 * half  # real entries: 2 per amplitude, 128 flops per group
    flops = p * 3 * (2 * wht_flops + 12 * half) + 10 * half
    launches = p * 3 * (2 * (groups + 2) + 8) + 10
    states = 2 * p + 6  # the stored sweep's states and torch's temporaries
    memory = states * s + half * (8 + 8 + 1) + RUNTIME_BYTES
    return Work(calls=launches, passes=passes, bytes=float(passes * s), flops=float(flops),
                memory_bytes=int(memory), working_set_bytes=states * s, params=2 * p, dtype=dtype)


def qml_gates(n_wires: int, ranges=(1, 3)) -> tuple[tuple[int, int], ...]:
    """The CCQC plan's ``(control, target)`` gates after the product state (as ``QuantumLayer`` builds it)."""
    from qhybrid.qml.circuit import chain_pairs

    gates = []
    for k, rng in enumerate(ranges):
        if k > 0:
            gates += [(-1, w) for w in range(n_wires)]
        gates += list(chain_pairs(n_wires, rng))
    return tuple(gates)


def qml_params(n_wires: int, n_features: int = 60, n_layers: int = 2) -> int:
    """Trainable parameters of the DressedQNN: input Linear, ``(2, n, 3)`` per layer, final Rot, output Linear."""
    return n_features * n_wires + n_wires + n_layers * 6 * n_wires + 3 + 2


def qml_work(n_wires: int, batch: int, *, dtype: str = "complex128", ranges=(1, 3), chunk: int | None = None,
             states: int = 2, gate_by_gate: bool = False) -> Work:
    """Work of one DressedQNN optimizer step on a local batch of ``batch`` samples, simulated
    ``chunk`` samples at a time (default all), each holding ``states`` full states
    (``sim.memory.QML_STATES_PER_SAMPLE``: 2 on the numba kernels). The numba set runs the gates
    in cache blocks (``sim.gateblocks``); ``gate_by_gate``: the torch reference (a GPU's torch
    path), one pass per gate.

    Example:
        >>> qml_work(4, 2).params
        297
    """
    item = _check_dtype(dtype)
    gates = qml_gates(n_wires, ranges)
    size = 2**n_wires
    s = size * item
    chunk = min(batch, chunk or batch)
    touched = sum(0.5 if c >= 0 else 1.0 for c, _ in gates)  # a controlled gate touches half the state
    blocks = qml_blocks(n_wires, ranges)
    # forward: product state (a write), the cache blocks (r+w each), rho and lambda = O psi (psi read,
    # lambda written); backward: per block psi r+w and lam r+w, factor gradients (3)
    passes_per_sample = 1 + 2 * blocks + 2 + 4 * blocks + 3
    if gate_by_gate:  # product state (2), gates (r+w), rho (a read); lambda = O psi (r+w), per gate
        passes_per_sample = 2 + 2 * touched + 1 + 2 + 4 * touched + 3  # psi and lam r+w, factors (3)
    flops_per_sample = size * (14 * touched + (14 + 16 + 14) * touched + 40)
    memory = states * chunk * s + RUNTIME_BYTES
    # kernel calls on one thread per chunk (batched.run x 2, sweep, factor_gradients); qml_split per machine
    return Work(calls=QML_CALLS * -(-batch // chunk), passes=passes_per_sample * batch,
                bytes=float(passes_per_sample * batch * s), flops=float(flops_per_sample * batch),
                memory_bytes=int(memory), working_set_bytes=int(states * chunk * s),
                params=qml_params(n_wires, n_layers=len(ranges)), dtype=dtype,
                serial_bytes=float(QML_COPIES * 2 * batch * s))


#: Large registers: past the last-level cache the QML kernels run slower per amplitude than the
#: calibration's sizes (at most 16 wires) show: 16-28 % at 23-26 wires on a 2-core Xeon with a
#: 480 MiB L3, in line with it below. The calibration times a step at :func:`qml_huge_wires`.
QML_HUGE_WIRES = (20, 24)


def qml_huge_wires(l3_bytes: int, batch: int, *, states: int = 2, itemsize: int = 16) -> int:
    """Wires of the calibration's step past the last-level cache: the fewest in QML_HUGE_WIRES whose
    ``batch`` samples' states (``states`` each) take at least twice ``l3_bytes``."""
    low, high = QML_HUGE_WIRES
    for n in range(low, high):
        if states * batch * itemsize << n >= 2 * l3_bytes:
            return n
    return high


QML_CALLS = 5  # batched.product, run, observe, sweep, factor_gradients: each one run_parts
QML_COPIES = 0  # numpy planar copies a step: none (the kernels write and read the planes themselves)
QML_EVAL_CALLS = 3  # an evaluation (no gradient): batched.product, run, observe
QML_EVAL_COPIES = 0


def qml_blocks(n_wires: int, ranges=(1, 3)) -> int:
    """Cache blocks of the CCQC plan's gates (``sim.gateblocks.blocks``): full passes a forward pass makes."""
    from qhybrid.sim.gateblocks import blocks

    return len(blocks(n_wires, qml_gates(n_wires, ranges)))


def qml_eval_work(n_wires: int, samples: int, *, dtype: str = "complex128", ranges=(1, 3),
                  chunk: int | None = None, gate_by_gate: bool = False) -> Work:
    """Work of the job's evaluation after an epoch: the forward pass alone (product state, gates,
    ``<Z0>``; no sweep) on ``samples`` held-out samples, ``chunk`` at a time (``workloads.qml.evaluate``).

    Example:
        >>> qml_eval_work(4, 52).calls
        3
    """
    item = _check_dtype(dtype)
    gates = qml_gates(n_wires, ranges)
    size = 2**n_wires
    s = size * item
    chunk = min(samples, chunk or samples)
    touched = sum(0.5 if c >= 0 else 1.0 for c, _ in gates)
    passes_per_sample = 1 + 2 * qml_blocks(n_wires, ranges) + 1  # product state, the blocks, rho (a read)
    if gate_by_gate:  # the torch reference: product state (2), every gate (r+w), rho (a read)
        passes_per_sample = 2 + 2 * touched + 1
    states = 2  # psi (planar), the complex product state
    return Work(calls=QML_EVAL_CALLS * -(-samples // chunk), passes=passes_per_sample * samples,
                bytes=float(passes_per_sample * samples * s), flops=float(samples * size * (14 * touched + 40)),
                memory_bytes=int(states * chunk * s + RUNTIME_BYTES), working_set_bytes=int(states * chunk * s),
                params=qml_params(n_wires, n_layers=len(ranges)), dtype=dtype,
                serial_bytes=float(QML_EVAL_COPIES * 2 * samples * s))


def qml_split(n_wires: int, batch: int, threads: int, *, ranges=(1, 3), forward: bool = False) -> tuple[int, int]:
    """``(busy threads, thread hand-offs)`` of a DressedQNN step's kernels on ``threads`` threads, as
    ``sim.batched._calls`` cuts them: one thread below ``PARALLEL_MIN`` amplitudes of the batch
    (``batch x 2^n``); a slice of samples per thread (``min(batch, threads)`` busy, one hand-off per
    call) when the batch covers the threads or has under ``SPLIT_MIN`` amplitudes; else every
    cache block shared by all threads (a hand-off per block in the run and the sweep, one for the
    product state and the observable, the factor gradients one). ``forward``: an evaluation's
    forward pass alone (product state, blocks, observable)."""
    from qhybrid.sim.batched import SPLIT_MIN
    from qhybrid.sim.pool import threads_for

    size = 2**n_wires
    use = threads_for(batch * size, threads=max(1, threads))
    if batch >= use or batch * size < SPLIT_MIN:
        return min(batch, use), QML_EVAL_CALLS if forward else QML_CALLS
    blocks = qml_blocks(n_wires, ranges)
    return use, blocks + 2 if forward else 2 * blocks + 3
