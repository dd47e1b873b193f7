"""One QML step's seconds and memory on a machine, by the engine's own chunk rule.

The job's layer cuts every batch (a training step's local batch, the held-out samples after an
epoch) into chunks that fit the free memory (:func:`qhybrid.sim.memory.chunk_size`); this
module asks the same function with the machine's memory, so the estimate's memory is one
chunk's states plus the process, and its time counts the kernel calls of every chunk.
"""
from __future__ import annotations

from dataclasses import dataclass

from qhybrid.errors import MemoryLimitError

#: The CUDA context and the allocator's reserve on a GPU (bytes not free for states)
CUDA_CONTEXT_BYTES = 600 * 2**20


@dataclass(frozen=True)
class QmlStep:
    """A QML job's step on one machine.

    Attributes:
        seconds: one optimizer step, with its share of the epoch's evaluation (None when unknown).
        need: peak bytes of one process (one chunk's states, the evaluation's when larger, the process).
        params: trainable parameters (the all-reduce).
        chunk: samples per engine call in training, ``eval_chunk`` in the evaluation.
        eval_chunk: see ``chunk``.
        note: why it cannot fit, in one line (None when it can).
    """

    seconds: float | None
    need: int
    params: int
    chunk: int
    eval_chunk: int
    note: str | None = None


def _chunk(n: int, batch: int, *, dtype: str, states: int, free: int, share: float, cap) -> tuple[int, str | None]:
    from qhybrid.sim.memory import chunk_size

    try:
        return chunk_size(n, batch=max(1, batch), dtype=dtype, states_per_sample=states, available=free,
                          share=share, max_samples=cap), None
    except MemoryLimitError as err:
        return 1, str(err)


def qml_step(s, machine, cal, *, local_batch: int, held: int, steps: int, per_machine: int, gpu: bool,
             kernels: str | None = None) -> QmlStep:
    """Our engine's DressedQNN step on ``machine`` (``s``: the job's settings; ``held``: the held-out
    samples one rank evaluates after each of the epochs of ``steps`` steps, its share of them); ``kernels``: the
    GPU's kernel set (``"triton"`` / ``"torch"``, :func:`qhybrid.estimate.gpu.kernel_path`; None: torch)."""
    from qhybrid.estimate import gpu as gpu_work
    from qhybrid.estimate import model, work
    from qhybrid.sim.memory import QML_STATES_PER_SAMPLE, required_bytes

    kernel = (kernels or "torch") if gpu else "numba"
    train_states, eval_states = QML_STATES_PER_SAMPLE[kernel, True], QML_STATES_PER_SAMPLE[kernel, False]
    if gpu:
        free, share = int(0.95 * machine.gpu_memory_bytes) - CUDA_CONTEXT_BYTES, 1.0
    else:
        free, share = machine.memory_bytes - per_machine * work.RUNTIME_BYTES, 1.0 / per_machine
    cap = getattr(s, "max_batch_states", 0) or None
    dtype = getattr(s, "dtype", "complex128")
    chunk, note = _chunk(s.nwires, local_batch, dtype=dtype, states=train_states, free=free, share=share, cap=cap)
    eval_chunk = _chunk(s.nwires, held, dtype=dtype, states=eval_states, free=free, share=share, cap=cap)[0]
    if gpu:
        w = gpu_work.qml_work(s.nwires, local_batch, dtype=dtype, chunk=chunk, states=train_states, kernels=kernel)
    else:
        w = work.qml_work(s.nwires, local_batch, dtype=dtype, chunk=chunk, states=train_states)
    states = max(required_bytes(s.nwires, batch=chunk, dtype=dtype, n_states=train_states),
                 required_bytes(s.nwires, batch=eval_chunk, dtype=dtype, n_states=eval_states) if held else 0)
    need = states + work.RUNTIME_BYTES  # the layer keeps one set of buffers: the larger call's
    cores = machine.cores // per_machine or 1
    seconds = (model.gpu_seconds(w, machine, overhead_s=model.STEP_OVERHEAD_GPU_S) if gpu else
               model.qml_cpu_seconds(w, machine, cal, batch=local_batch, n_wires=s.nwires, cores=cores, chunk=chunk))
    if held:  # the rank's held-out samples after each epoch: a share of each step
        ev = (gpu_work.qml_work(s.nwires, held, dtype=dtype, chunk=eval_chunk, states=eval_states, grad=False,
                                kernels=kernel) if gpu else work.qml_eval_work(s.nwires, held, dtype=dtype, chunk=eval_chunk))
        seconds += (model.gpu_seconds(ev, machine, overhead_s=model.STEP_OVERHEAD_GPU_S / 3) if gpu else
                    model.qml_eval_cpu_seconds(ev, machine, cal, samples=held, n_wires=s.nwires, cores=cores,
                                               chunk=eval_chunk)) / steps
    return QmlStep(seconds, need, w.params, chunk, eval_chunk, note)
