"""The QML layer and the fused QAOA adjoint in ``benchmarks/gpu_check.py``'s Triton section.

- **check** (:func:`check_qml`): the classifier (``qml.QuantumLayer``, ranges (1, 3), chunks of
  two samples) on the Triton kernel set with the chosen tiles against the torch set on the same
  device: outputs and every parameter's gradient (product state, forward runs, adjoint sweep,
  factor sums all in it).
- **passes** (:func:`passes`): the new kernels' passes for the per-pass bandwidth table: a run of
  controlled gates, an adjoint run on two states, the factor sums, the QAOA two-state pass.
- **time** (:func:`time_qml`): one 26-wire complex64 training step (forward + backward, one
  sample) on the Triton set against the torch set, side by side.
"""
from __future__ import annotations

import numpy as np
import torch


def _layer(n, dtype, kernel, device, chunk):
    from qhybrid.qml.layer import QuantumLayer

    return QuantumLayer(n, dtype=dtype, kernel=kernel, device=device, generator=torch.Generator().manual_seed(7),
                        max_batch_states=chunk)


def _step(layer, x):
    layer.zero_grad(set_to_none=True)
    out = layer(x)
    (out ** 2).sum().backward()
    return out.detach(), [p.grad for p in layer.parameters()]


def check_qml(ctx, tiles) -> list[str]:
    """The classifier on the Triton set vs the torch set: outputs and gradients."""
    from qhybrid.sim.kernels import get_kernel_set

    tri = type(get_kernel_set("triton"))(tiles=tiles)
    n, b = ctx.sizes(12, 4), 3
    x = torch.rand((b, n), generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    failures = []
    for dt in ctx.dtypes:
        tol = 1e-9 if dt == torch.complex128 else 1e-4
        o1, g1 = _step(_layer(n, dt, tri, ctx.device, 2), x)
        o2, g2 = _step(_layer(n, dt, "torch", ctx.device, 2), x)
        diff = max([float((o1 - o2).abs().max())] + [float((a - c).abs().max()) for a, c in zip(g1, g2)])
        if not diff <= tol:
            failures.append(f"qml layer n={n} {dt}: triton vs torch set max |diff| {diff:.1e}")
    return failures


def passes(ops, tiles, x, n):
    """``(label, states moved, fn)`` of the QML and QAOA-adjoint passes on ``x`` ``(1, 2**n)``."""
    from qhybrid.sim.triton import qml_ops

    dt, dev = x.dtype, x.device
    g = tiles.pass_bits
    chain = tuple((w, w + 1) for w in range(g))  # controlled gates, each on the previous target
    mats = torch.eye(2, dtype=dt, device=dev).expand(g, 2, 2).contiguous()
    y = torch.ones_like(x)
    factors = torch.full((1, n, 2), 2**-0.5, dtype=dt, device=dev)
    w = ops.Weights("values", w=torch.ones(2**n, dtype=torch.float64, device=dev))
    high = list(range(g, min(n, 2 * g)))
    return [
        ("QML run of 10 controlled gates", 2, lambda: qml_ops.apply_gates(x, chain, mats, n, tiles=tiles)),
        ("QML adjoint run, two states", 4, lambda: qml_ops.adjoint_gates(x, y, chain, mats, n, tiles=tiles)),
        ("QML product state (write)", 1, lambda: qml_ops.product_state(x, factors, tiles=tiles)),
        ("QML factor sums (read)", 1, lambda: qml_ops.factor_sums(y, factors, tiles=tiles)),
        ("QAOA adjoint pair pass, high bits", 4 + 8 / x.element_size(),
         lambda: ops.pair_pass(x, y, high, pre="butterfly", post="butterfly", reduce="inner", weights=w,
                               tiles=tiles)),
    ]


def time_qml(ctx, print_row, median, late, tiles) -> list[dict]:
    """One 26-wire complex64 training step (one sample) on the Triton set and the torch set."""
    from qhybrid.sim.kernels import get_kernel_set

    row = {"section": "triton", "workload": "QML step, 1 sample (triton set; grad_s: torch set)",
           "dtype": "complex64", "n": ctx.sizes(26, 6)}
    if late(ctx):
        row["note"] = "skipped: time budget"
        print_row(row)
        return [row]
    try:
        n = row["n"]
        tri = type(get_kernel_set("triton"))(tiles=tiles)
        x = torch.tensor(np.random.default_rng(5).uniform(0, 3, size=(1, n)))
        layers = {k: _layer(n, torch.complex64, k, ctx.device, 1) for k in ("torch",)}
        layers["triton"] = _layer(n, torch.complex64, tri, ctx.device, 1)
        row["forward_s"] = median(ctx, lambda: _step(layers["triton"], x), 3)
        row["grad_s"] = median(ctx, lambda: _step(layers["torch"], x), 3)
        row["note"] = f"torch set / triton set = {row['grad_s'] / row['forward_s']:.1f}x"
    except Exception as exc:
        row["note"] = f"{type(exc).__name__}: {str(exc)[:100]}"
    print_row(row)
    if ctx.device.type == "cuda":
        torch.cuda.empty_cache()
    return [row]
