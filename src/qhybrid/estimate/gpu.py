"""The GPU side of the estimate: which kernel set a machine's GPU runs, and that set's work.

``qhybrid.gpu`` runs the Triton kernels on a GPU Triton supports and the torch reference
elsewhere (a V100 of ``ml.p3.*``, a T4 of ``g4dn``): :func:`kernel_path` asks
:func:`qhybrid.sim.triton.status.capability_path` for a catalogue type's GPU model and
:func:`qhybrid.devices.gpu_kernel_path` for the local GPU, never deciding itself. The Triton
work counts the kernels' passes with the launchers' own rules (:mod:`qhybrid.sim.triton.passes`);
the torch work stays :func:`qhybrid.estimate.work.qaoa_work` / ``qml_work``'s. Either is then
timed by :func:`qhybrid.estimate.model.gpu_seconds` (bandwidth and arithmetic, uncalibrated).
"""
from __future__ import annotations

from qhybrid.estimate import work as W
from qhybrid.sim.triton.passes import qaoa_traffic, qml_traffic

LAUNCH_OVERHEAD_CALLS = 10  # the small torch steps around a QML chunk's kernels (rho, lambda, sums)


def kernel_path(machine) -> tuple[str, str]:
    """``("triton" | "torch", why)`` for ``machine``'s GPU (``hardware.Machine``)."""
    if machine.name == "local":
        from qhybrid.devices import gpu_kernel_path

        return gpu_kernel_path(cuda=bool(machine.gpus) or None)
    from qhybrid.sim.triton.status import capability_path

    return capability_path(machine.gpu_capability, machine.gpu_model or "the GPU")


def qaoa_work(n: int, layers: int, *, dtype: str = "complex128", problem: str = "maxcut",
              kernels: str = "triton") -> W.Work:
    """One QAOA energy+gradient on the GPU with ``kernels`` (``"triton"``; else the torch work).

    Example:
        >>> qaoa_work(24, 2).passes  # reads and writes of the 2**23 half state
        48.0
    """
    if kernels != "triton":
        return W.qaoa_work(n, layers, dtype=dtype, problem=problem, gpu=True)
    item = W._check_dtype(dtype)
    m = n - 1 if (problem == "maxcut" and n >= 2) else n
    p = int(layers)
    t = qaoa_traffic(m, p)
    s = 2**m * item
    index = 2**m * (2 + 1)  # the cost index (int16) and sum Z (int8), read by the passes with a diagonal
    diagonal_passes = 3 * p + 1
    flops = 2**m * (p * 3 * (4 * m + 12) + 10)  # butterflies 2 per bit, diagonals 6, both states back
    memory = 2 * s + index + W.RUNTIME_BYTES
    return W.Work(calls=t["passes"] + p, passes=float(t["units"]), bytes=float(t["units"] * s + diagonal_passes * index),
                  flops=float(flops), memory_bytes=int(memory), working_set_bytes=2 * s + index, params=2 * p,
                  dtype=dtype)


def qml_work(n_wires: int, batch: int, *, dtype: str = "complex128", ranges=(1, 3), chunk: int | None = None,
             states: int = 4, grad: bool = True, kernels: str = "triton") -> W.Work:
    """One DressedQNN step (``grad``) or evaluation on ``batch`` samples, ``chunk`` at a time, on
    the GPU with ``kernels`` (``"triton"``; else the torch work of :func:`~.work.qml_work`)."""
    if kernels != "triton":
        if grad:
            return W.qml_work(n_wires, batch, dtype=dtype, ranges=ranges, chunk=chunk, states=states,
                              gate_by_gate=True)
        return W.qml_eval_work(n_wires, batch, dtype=dtype, ranges=ranges, chunk=chunk, gate_by_gate=True)
    item = W._check_dtype(dtype)
    gates = W.qml_gates(n_wires, ranges)
    t = qml_traffic(gates, grad=grad)
    size = 2**n_wires
    chunk = min(batch, chunk or batch)
    touched = sum(0.5 if c >= 0 else 1.0 for c, _ in gates)
    flops = size * (14 * touched + ((14 + 16 + 14) * touched + 40 if grad else 40))
    return W.Work(calls=(t["passes"] + LAUNCH_OVERHEAD_CALLS) * -(-batch // chunk), passes=float(t["units"] * batch),
                  bytes=float(t["units"] * batch * size * item), flops=float(flops * batch),
                  memory_bytes=int(states * chunk * size * item + W.RUNTIME_BYTES),
                  working_set_bytes=int(states * chunk * size * item),
                  params=W.qml_params(n_wires, n_layers=len(ranges)), dtype=dtype)
