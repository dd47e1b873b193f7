"""The Triton section of ``benchmarks/gpu_check.py``: compile, check and time the Triton kernels.

- **compile**: every kernel variant once at a small size, with the first tile sizes of
  ``TILES`` that compile and agree with the torch path (a GPU whose shared memory or registers
  cannot take a tile falls back to the next, smaller one);
- **check**: a random circuit (fused 1-qubit layer, dense, controlled, diagonal gates) against a
  torch reference on the same device, the reductions, and QAOA energy+gradient against the
  torch engine on the device and the CPU engine (``qhybrid.qaoa.QAOA`` on CPU);
- **time**: the device's copy bandwidth (a large ``copy_``), each pass's bandwidth as a fraction
  of it (target >= 70 %), QAOA Max-Cut energy+gradient (p = 2) against the bandwidth floor of
  the fused sweep (``benchmarks/qaoa.py``'s ``bytes_moved``; target <= 1.5x at n >= 24), and
  ``lightning.gpu`` side by side when PennyLane and it are installed, and (``gpu_triton_qml.py``)
  the QML classifier checked on the triton set against the torch set, its passes, and a
  26-wire training step on both sets; (``gpu_triton_index.py``) CNOT / SWAP, ladders and bit-flip
  Pauli words checked against the torch set and their passes timed.

Torch, numpy and qhybrid only (PennyLane optional). ``--interpret`` (gpu_check.py) runs it on CPU
tensors under Triton's interpreter at tiny sizes: the script's own test, not a measurement.
"""
from __future__ import annotations

import statistics
import time

import numpy as np
import torch

#: tile sizes tried in order (pass bits, pass tile, elementwise block, dense rows)
TILES = [(10, 4096, 2048, 128), (8, 2048, 1024, 64), (6, 1024, 1024, 32), (4, 256, 512, 16)]
TARGET_PASS = 0.70  # fraction of copy bandwidth every pass should reach
TARGET_FLOOR = 1.5  # QAOA energy+gradient at n >= 24 within this factor of the floor
STATE = {}  # what the sections share: the chosen Tiles, the copy bandwidth, the targets' verdicts
BUDGET_S = 420.0  # the section's own time limit (compiles included): later items are skipped, said so


def _late(ctx) -> bool:
    """Past the section's deadline (``ctx.deadline`` when gpu_check set one, else BUDGET_S from the start)."""
    deadline = getattr(ctx, "deadline", None) or STATE.setdefault("deadline", time.monotonic() + BUDGET_S)
    return time.monotonic() > deadline


def _ops():
    from qhybrid.sim.triton import ops

    return ops


def _ref_apply(state, matrix, wires, n):
    """Torch reference: a ``(d, d)`` matrix on ``wires`` of ``(B, 2**n)`` states."""
    b, k = state.shape[0], len(wires)
    psi = state.reshape((b,) + (2,) * n)
    axes = [1 + w for w in wires]
    psi = torch.movedim(psi, axes, list(range(1, k + 1)))
    shape = psi.shape
    out = torch.matmul(matrix, psi.reshape(b, 2**k, -1)).reshape(shape)
    return torch.movedim(out, list(range(1, k + 1)), axes).reshape(b, -1)


def _unitary(rng, d, dtype, device):
    z = rng.normal(size=(d, d)) + 1j * rng.normal(size=(d, d))
    q, r = np.linalg.qr(z)
    return torch.tensor(q * (np.diag(r) / np.abs(np.diag(r))), dtype=dtype, device=device)


def _circuit_errors(ctx, tiles, dtype, n, seed=7) -> float:
    """Max |diff| of a random circuit on the Triton kernels vs the torch reference (same device)."""
    ops = _ops()
    rng = np.random.default_rng(seed)
    dev = ctx.device
    s = torch.tensor(rng.normal(size=(2, 2**n)) + 1j * rng.normal(size=(2, 2**n)), dtype=dtype, device=dev)
    s /= torch.linalg.vector_norm(s, dim=1, keepdim=True)
    x, want = s.clone(), s.clone()
    wires = list(range(0, n, 2)) or [0]
    mats = torch.stack([_unitary(rng, 2, dtype, dev) for _ in wires])[None]
    ops.apply_layer(x, [n - 1 - w for w in wires], mats, tiles=tiles)
    for i, w in enumerate(wires):
        want = _ref_apply(want, mats[0, i], [w], n)
    err = float((x - want).abs().max())
    for targets, controls in (((n - 1, 1), ()), ((0, n - 2, 2), ()), ((1,), (n - 1,)), ((2, 0), (n - 2,))):
        u = _unitary(rng, 2 ** len(targets), dtype, dev)
        ops.apply_dense(x, u[None], [n - 1 - w for w in targets], [n - 1 - w for w in controls], tiles=tiles)
        full = torch.eye(2 ** (len(targets) + len(controls)), dtype=dtype, device=dev)
        full[-u.shape[0]:, -u.shape[0]:] = u
        want = _ref_apply(want, full, [*controls, *targets], n)
        err = max(err, float((x - want).abs().max()))
    d = torch.exp(1j * torch.tensor(rng.uniform(-3, 3, size=4), device=dev)).to(dtype)
    ops.apply_diagonal(x, d[None], [n - 1 - 1, n - 1 - 0], tiles=tiles)
    want = _ref_apply(want, torch.diag(d), [1, 0], n)
    err = max(err, float((x - want).abs().max()))
    w = torch.tensor(rng.normal(size=2**n), device=dev)
    got = ops.inner(x, s, ops.Weights("values", w=w), tiles=tiles).to(dev)
    ref = (x.conj() * w * s).sum(1).to(torch.complex128)
    return max(err, float((got - ref).abs().max()))


def _qaoa_diag(n, device, seed=1967):
    from qhybrid.qaoa.problem import cost_diagonal, random_graph

    return cost_diagonal(random_graph(n, int(1.5 * n), seed=seed), "maxcut", device=device)


def compile_triton(ctx) -> list[str]:
    """Pick the first tile sizes whose kernels all compile and pass a small check."""
    ops = _ops()
    notes = []
    tol = {torch.complex128: 1e-10, torch.complex64: 1e-4}
    # tiny runs (the interpreter) take the smallest tiles: several passes and programs even at n = 8
    for bits, tile, block, rows in (TILES[-1:] if ctx.smoke else TILES):
        tiles = ops.Tiles(pass_bits=bits, tile=tile, block=block, dense_rows=rows)
        try:
            t0 = time.perf_counter()
            bad = [f"{dt}: {e:.1e}" for dt in ctx.dtypes
                   if (e := _circuit_errors(ctx, tiles, dt, n=ctx.sizes(min(bits + 2, 12), 5))) > tol[dt]]
            if bad:
                notes.append(f"tiles {tiles}: wrong results {bad}")
                continue
            STATE["tiles"] = tiles
            print(f"    - triton kernels compiled with {tiles} in {time.perf_counter() - t0:.1f} s")
            return []
        except Exception as exc:  # a compile failure: try smaller tiles
            notes.append(f"tiles {tiles}: {type(exc).__name__}: {str(exc)[:160]}")
    return ["no tile size compiled and passed: " + " | ".join(notes)]


def check_triton(ctx) -> list[str]:
    """Compile (tile fallback), the random circuit at larger sizes, and QAOA vs torch and the CPU engine."""
    from qhybrid.devices import gpu_kernel_path
    from qhybrid.sim.triton import interpreting

    _late(ctx)  # starts the section's clock
    if interpreting():
        ok, why = True, "Triton's interpreter (TRITON_INTERPRET=1): the kernels run on CPU tensors, slowly"
    else:
        kernels, why = gpu_kernel_path(ctx.device.index or 0)
        ok = kernels == "triton"
    print(f"    - gpu kernels: {why}")
    if not ok:
        return [f"triton unusable here: {why}"]
    failures = compile_triton(ctx)
    if failures:
        return failures
    tiles, tol = STATE["tiles"], {torch.complex128: 1e-10, torch.complex64: 1e-4}
    for dt in ctx.dtypes:
        for n in ctx.sizes([12], [6]):  # compile_triton's variants: each new shape is another compile
            err = _circuit_errors(ctx, tiles, dt, n, seed=n)
            if not err <= tol[dt]:
                failures.append(f"circuit n={n} {dt}: max |diff| {err:.1e}")
    failures += _qml().check_qml(ctx, tiles)
    failures += _index().check_index(ctx, tiles)
    from qhybrid.qaoa import QAOA
    from qhybrid.qaoa import torch_engine as te
    from qhybrid.qaoa.triton_sweep import TritonSweep

    params = np.array([[0.4, -0.3], [0.6, 0.25]])
    for n in ctx.sizes([14, 24], [6]):  # 13 and 23 bits: groups of 10 and 3, as the timed n = 24
        d_dev = _qaoa_diag(n, ctx.device)
        e_cpu, g_cpu = QAOA(d_cpu_edges(n), n_nodes=n).energy_and_grad(params)
        for dt in ctx.dtypes:
            sweep = TritonSweep(d_dev, symmetric=True, dtype=dt, device=ctx.device, tiles=tiles)
            (e, g), = sweep.energy_and_grad(params[None])
            we, wg = te.energy_and_grad(d_dev, torch.tensor(params, device=ctx.device)[None], dtype=dt)
            t = 1e-9 if dt == torch.complex128 else 1e-4
            scale = max(1.0, abs(e_cpu))
            for label, (re, rg) in (("torch", (float(we[0]), wg[0].cpu().numpy())), ("cpu", (e_cpu, g_cpu))):
                diff = max(abs(e - re), float(np.abs(g - rg).max()))
                if not diff <= t * scale:
                    failures.append(f"qaoa n={n} {dt} vs {label}: {diff:.1e}")
    return failures


def d_cpu_edges(n, seed=1967):
    """The edges of :func:`_qaoa_diag`'s graph (for ``QAOA``)."""
    from qhybrid.qaoa.problem import random_graph

    return [(int(i), int(j)) for i, j in random_graph(n, int(1.5 * n), seed=seed).edges]


def _median(ctx, fn, repeats=None):
    fn()
    ctx.sync()
    times = []
    for _ in range(repeats or ctx.repeats):
        t0 = time.perf_counter()
        fn()
        ctx.sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def copy_bandwidth(ctx, n) -> float:
    """Bytes/s of ``y.copy_(x)`` on a ``2**n`` complex128 state (read + write)."""
    x = torch.ones(2**n, dtype=torch.complex128, device=ctx.device)
    y = torch.empty_like(x)
    return 2 * x.numel() * 16 / _median(ctx, lambda: y.copy_(x))


def _verdict(met: bool) -> str:
    return "target met" if met else "target MISSED"


def time_triton(ctx, print_row) -> list[dict]:
    """Copy bandwidth, each pass's fraction of it, QAOA energy+gradient against the floor, lightning.gpu."""
    if "tiles" not in STATE:
        return [{"section": "triton", "workload": "timings", "note": "skipped: the kernels did not compile"}]
    ops, tiles, rows = _ops(), STATE["tiles"], []
    n = ctx.sizes(26, 8)
    bw = STATE["copy_bw"] = copy_bandwidth(ctx, n)
    rows.append({"section": "triton", "workload": "copy bandwidth (GB/s)", "n": n, "dtype": "complex128",
                 "value": bw / 1e9})
    print_row(rows[-1])
    # the targets first (QAOA complex128, then the passes), then what is left time for
    rows += _time_qaoa(ctx, print_row, tiles, bw, torch.complex128, ctx.sizes([20, 24, 26, 28, 30], [6]))
    # two groups instead of three at n = 24 (23 bits): half the passes, if a 12-bit tile runs well
    wide = ops.Tiles(pass_bits=12, tile=max(tiles.tile, 8192), block=tiles.block, dense_rows=tiles.dense_rows)
    rows += _time_qaoa(ctx, print_row, wide, bw, torch.complex128, ctx.sizes([24], [6]), label=", pass_bits 12")
    for dt in ctx.dtypes:
        x = torch.ones((1, 2**n), dtype=dt, device=ctx.device)
        timed = _passes(ops, tiles, x, n) + _qml().passes(ops, tiles, x, n) + _index().passes(ops, tiles, x, n)
        for label, states, fn in timed:
            row = {"section": "triton", "workload": f"pass: {label}", "n": n, "dtype": str(dt).replace("torch.", "")}
            try:
                if _late(ctx):
                    raise TimeoutError("skipped: past the section's time budget")
                row["forward_s"] = t = _median(ctx, fn)
                frac = states * x.numel() * x.element_size() / t / bw
                row["note"] = f"{frac:.0%} of copy: {_verdict(frac >= TARGET_PASS)}"
            except Exception as exc:
                row["note"] = f"{type(exc).__name__}: {str(exc)[:100]}"
            rows.append(row)
            print_row(row)
    if torch.complex64 in ctx.dtypes:
        rows += _time_qaoa(ctx, print_row, tiles, bw, torch.complex64, ctx.sizes([24], [6]))
    rows += _time_lightning(ctx, print_row)
    rows += _time_qml(ctx, print_row)
    return rows


def _time_qml(ctx, print_row) -> list[dict]:
    return _qml().time_qml(ctx, print_row, _median, _late, STATE["tiles"])


def _qml():
    """``gpu_triton_qml.py`` beside this file (the QML layer's and the fused adjoint's items)."""
    return _sibling("gpu_triton_qml")


def _index():
    """``gpu_triton_index.py`` beside this file (CNOT / SWAP, ladders, bit-flip Pauli words)."""
    return _sibling("gpu_triton_index")


def _sibling(name: str):
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(f"qhybrid_{name}", Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _passes(ops, tiles, x, n):
    """``(label, states moved, fn)`` of every pass timed on the state ``x`` (``states``: how many
    state-sized buffers the pass reads plus writes, its index and weight arrays included)."""
    dt, dev, item = x.dtype, x.device, x.element_size()
    low, high = list(range(tiles.pass_bits)), list(range(tiles.pass_bits, min(n, 2 * tiles.pass_bits)))
    gates = torch.eye(2, dtype=dt, device=dev).expand(1, tiles.pass_bits, 2, 2).contiguous()
    table = torch.ones(2 * n + 1, dtype=dt, device=dev)
    index = torch.zeros(2**n, dtype=torch.int8, device=dev)
    w = ops.Weights("values", w=torch.ones(2**n, dtype=torch.float64, device=dev))
    y = torch.empty_like(x)
    two = gates[0, :1].kron(gates[0, 0])[None]
    return [
        ("butterflies, low bits", 2, lambda: ops.run_pass(x, low, pre="butterfly", tiles=tiles)),
        ("mixer W D' W, high bits", 2.0 + 1 / item,
         lambda: ops.run_pass(x, high, pre="butterfly", post="butterfly", lookup=(index, n, table), tiles=tiles)),
        ("1-qubit layer, low bits", 2, lambda: ops.apply_layer(x, low, gates, tiles=tiles)),
        ("1-qubit layer, high bits", 2, lambda: ops.apply_layer(x, high, gates[:, :len(high)], tiles=tiles)),
        ("dense 2-qubit", 2, lambda: ops.apply_dense(x, two, [n - 1, 0], tiles=tiles)),
        ("controlled 2-qubit", 1, lambda: ops.apply_dense(x, gates[0, :1], [3], [n - 2], tiles=tiles)),
        ("diagonal 2-qubit", 2, lambda: ops.apply_diagonal(x, table[None, :4], [0, n - 1], tiles=tiles)),
        ("expectation <C>", 1 + 8 / item, lambda: ops.expect(x, w, tiles=tiles)),
        ("inner <a|C|b>", 2 + 8 / item, lambda: ops.inner(x, y, w, tiles=tiles)),
    ]


def _time_qaoa(ctx, print_row, tiles, bw, dt, sizes, label="") -> list[dict]:
    import importlib.util
    from pathlib import Path

    from qhybrid.qaoa.triton_sweep import TritonSweep, traffic

    spec = importlib.util.spec_from_file_location("qhybrid_bench_qaoa", Path(__file__).with_name("qaoa.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rows, params = [], np.array([[[0.4, -0.3], [0.6, 0.25]]])
    for n in sizes:
        row = {"section": "triton", "workload": "QAOA Max-Cut e+g p=2" + label, "n": n,
               "dtype": str(dt).replace("torch.", ""), "params": 4}
        try:
            if _late(ctx):
                raise TimeoutError("skipped: past the section's time budget")
            sweep = TritonSweep(_qaoa_diag(n, ctx.device), symmetric=True, dtype=dt, device=ctx.device, tiles=tiles)
            row["grad_s"] = _median(ctx, lambda: sweep.energy_and_grad(params))
            row["forward_s"] = _median(ctx, lambda: sweep.energy(params))
            row["value"] = float(sweep.energy(params)[0])
            floor = bench.bytes_moved(n, 2, dtype=dt) / bw
            x = row["grad_s"] / floor
            met = x <= TARGET_FLOOR if n >= 24 else True
            units = traffic(n - 1, 2, tiles.pass_bits)["units"]
            row["note"] = (f"floor {floor * 1e3:.3f} ms, {x:.1f}x floor" + (f": {_verdict(met)}" if n >= 24 else "")
                           + f"; {units} half-state reads/writes")
        except Exception as exc:  # out of memory at the largest n, most likely
            row["note"] = f"{type(exc).__name__}: {str(exc)[:100]}"
        rows.append(row)
        print_row(row)
        if ctx.device.type == "cuda":
            torch.cuda.empty_cache()
    return rows


def _time_lightning(ctx, print_row) -> list[dict]:
    """QAOA Max-Cut e+g (p = 2, adjoint) on lightning.gpu, when PennyLane and it are installed."""
    if _late(ctx):
        row = {"section": "triton", "workload": "lightning.gpu QAOA e+g p=2", "note": "skipped: time budget"}
        print_row(row)
        return [row]
    try:
        import pennylane as qml

        qml.device("lightning.gpu", wires=2)
    except Exception as exc:
        row = {"section": "triton", "workload": "lightning.gpu QAOA e+g p=2",
               "note": f"not run: {type(exc).__name__}: {str(exc)[:80]}"}
        print_row(row)
        return [row]
    rows = []
    for n in ctx.sizes([20, 24], [6]):
        edges = d_cpu_edges(n)
        dev = qml.device("lightning.gpu", wires=n)
        ham = qml.Hamiltonian([0.5] * len(edges), [qml.PauliZ(i) @ qml.PauliZ(j) for i, j in edges])

        @qml.qnode(dev, diff_method="adjoint")
        def circuit(g, b):
            for w in range(n):
                qml.Hadamard(w)
            for layer in range(2):
                for i, j in edges:
                    qml.IsingZZ(g[layer], wires=[i, j])
                for w in range(n):
                    qml.RX(2 * b[layer], wires=w)
            return qml.expval(ham)

        from pennylane import numpy as pnp

        g, b = pnp.array([0.4, -0.3], requires_grad=True), pnp.array([0.6, 0.25], requires_grad=True)
        t = _median(ctx, lambda: qml.grad(circuit)(g, b), repeats=2)
        row = {"section": "triton", "workload": "lightning.gpu QAOA e+g p=2", "n": n, "dtype": "complex128",
               "grad_s": t}
        rows.append(row)
        print_row(row)
    return rows
