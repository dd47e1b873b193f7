"""Program capture (``qml.capture.enable()``) on qhybrid devices.

Under capture PennyLane applies the device's preprocessing to the captured program (plxpr)
and hands the result to ``Device.eval_jaxpr``. As on lightning.qubit, the preprocessing is
``defer_measurements`` with ``num_wires=len(device.wires)`` (mid-circuit measurements go to
the device's spare wires). lightning.qubit then stops (it has no ``eval_jaxpr``:
``NotImplementedError``); here a program called with concrete arguments is turned into a tape
(``qml.tape.plxpr_to_tape``: loops unrolled, conditionals resolved) and run like any tape, through
the device's own preprocessing and engine. Under ``jax.jit``, ``jax.grad`` or ``jax.vmap`` the
arguments are tracers, which the engine cannot read: a one-line DeviceError says to use
default.qubit (which interprets plxpr itself) or to disable capture.
"""
from __future__ import annotations

import pennylane as qml
from pennylane.devices import ExecutionConfig
from pennylane.transforms.core import CompilePipeline

from ..errors import DeviceError


def capture_pipeline(device) -> CompilePipeline:
    """The preprocessing PennyLane applies to a captured program on ``device``."""
    from .preprocess import _capture_wires

    prog = CompilePipeline()
    prog.add_transform(qml.defer_measurements, num_wires=_capture_wires(device))
    return prog


def eval_captured(device, jaxpr, consts, args, *, shots=None) -> list:
    """The results of the captured program ``jaxpr`` on ``device``, flat, one per output.

    Raises:
        DeviceError: an argument is a jax tracer (``jax.jit`` / ``jax.grad`` / ``jax.vmap``).
    """
    import jax

    if any(isinstance(a, jax.core.Tracer) for a in jax.tree_util.tree_leaves((list(consts), list(args)))):
        raise DeviceError(f"{device.name} runs a captured program (qml.capture) with concrete arguments only, "
                          f"not under jax.jit, jax.grad or jax.vmap; use default.qubit for those, or "
                          f"qml.capture.disable()")
    tape = qml.tape.plxpr_to_tape(jaxpr, consts, *args, shots=shots)
    qml.capture.disable()
    try:
        config = device.setup_execution_config(ExecutionConfig(gradient_method=None))
        tapes, post = device.preprocess_transforms(config)((tape,))
        results = post(device.execute(tapes, config))[0]
    finally:
        qml.capture.enable()
    return list(results) if len(tape.measurements) > 1 else [results]
