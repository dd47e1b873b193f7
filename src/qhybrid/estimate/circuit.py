"""Work of a general engine circuit, from its fused plan (``sim.fuse.lower``).

The forward pass walks the plan: a leading layer of 1-qubit gates on distinct
wires on ``|0...0>`` becomes the product state (one write), a CNOT ladder
followed by a layer is one gathered call, every other kernel op one call; each
call reads and writes the state once. An adjoint gradient sweeps the plan back
on the ket and the bra (two applications per op) and reads both for each
derivative: about three times the forward traffic. The tests count the calls
``sim.simulate.final_state`` really makes.
"""
from __future__ import annotations

from qhybrid.estimate.work import ITEM, RUNTIME_BYTES, Work

FLOPS_PER_AMPLITUDE = 8  # a fused 2x2 or diagonal op: about one complex multiply-add per amplitude


def forward_calls(circuit, *, dtype: str = "complex128", spare: bool = True) -> int:
    """Kernel calls of ``final_state(circuit)`` after the initial or product state.

    ``spare``: the run has a spare state buffer (a cache, as the PennyLane device keeps), so a
    layer and the CNOT ladders around it run as one call (a ladder alone is gathered into it).
    """
    import torch

    from qhybrid.sim.fuse import lower

    kops = lower(circuit.operations, circuit.n_wires, dtype=getattr(torch, dtype))
    if (circuit.initial_state is None and kops and kops[0].kind == "layer"
            and len(set(kops[0].wires)) == len(kops[0].wires)):
        kops = kops[1:]
    from qhybrid.sim.simulate import ladders_around_layer

    calls, k = 0, 0
    while k < len(kops):
        used = ladders_around_layer(kops, k)[3] if spare else 0
        k += max(used, 1)
        calls += 1
    return calls


def circuit_work(circuit, *, dtype: str = "complex128", gradient: bool = True) -> Work:
    """Work of one evaluation (and, with ``gradient``, its adjoint sweep) of an engine circuit."""
    s = circuit.batch_size * 2**circuit.n_wires * ITEM[dtype]
    calls = forward_calls(circuit, dtype=dtype)
    passes = 1 + 2 * calls + len(circuit.measurements)
    if gradient:
        passes *= 3
        calls *= 3
    amplitudes = passes * s / ITEM[dtype] / 2
    states = 4 if gradient else 2
    return Work(calls=calls + 1, passes=float(passes), bytes=float(passes * s),
                flops=float(FLOPS_PER_AMPLITUDE * amplitudes), memory_bytes=states * s + RUNTIME_BYTES,
                working_set_bytes=states * s, params=sum(len(op.trainable) for op in circuit.operations),
                dtype=dtype)
