"""PennyLane devices, whose work we cannot count: a probe timed here, scaled by 2^n.

The probe runs the workload's own circuit on the device at three small sizes
(``m - 4``, ``m - 2``, ``m``, ``m`` at most 18 qubits for QAOA and 12 wires for
QML; a few iterations each), fits
``t = a + c x gates(m) + b x W(m)`` with ``W(m) = 2^m x gates(m)`` (per-call
overhead ``a``, per-gate overhead ``c``, per-amplitude-gate cost ``b``; least
squares, a negative term dropped) and extrapolates to the requested size; once
its three states outgrow the last-level cache each amplitude costs ``CACHE_CLIFF`` times more (lightning.qubit, PERF_NOTES:
18 -> 20 qubits grows 6.5x where W grows 4.4x). On another machine the time
scales with one core's peak (lightning.qubit's gate kernels run on one
thread). Results are cached beside the calibration, keyed by device, workload
and sizes. Every figure built on a probe is labelled ``probe``.

lightning.gpu cannot be probed without a GPU: it is modelled as the state passes
of lightning's adjoint method (forward, un-apply on psi and lambda, a generator and
an inner product per parameter) at the GPU's bandwidth, plus a launch each
(labelled ``model``, not calibrated on a GPU).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from qhybrid.devices import Target, resolve
from qhybrid.estimate.calibrate import _best, _read_cache, cache_path, isolated, machine_key, nonnegative_fit, store
from qhybrid.estimate.calibrate_qml import qml_step

CACHE_CLIFF = 1.5
PROBE_MAX = {"qaoa": 18, "qml": 12}
STATES = 3  # a PennyLane adjoint run holds about three states (psi, lambda, H psi)
GPU_GATE_LAUNCH_S = 20e-6
# a probe not run (a submission that measures nothing): lightning.qubit's fit on the 2-core AMD EPYC
# (2026-12-01), (overhead s, per gate s, per amplitude-gate s); other devices are taken as it
NOMINAL_PROBE = {"qaoa": (0.022, 0.0, 1.5e-8), "qml": (0.5, 0.0, 1.5e-8)}


@dataclass(frozen=True)
class Probe:
    """A fitted probe: ``seconds(m) = overhead_s + per_gate_s x gates(m) + per_unit_s x W(m)``."""

    device: str
    workload: str
    sizes: tuple[int, ...]
    seconds: tuple[float, ...]
    overhead_s: float
    per_gate_s: float
    per_unit_s: float


def gates(workload: str, m: int, *, n: int, edges: int = 0, layers: int = 2) -> int:
    """Gates of the workload's PennyLane circuit at ``m`` qubits (edges kept at the density of ``n``)."""
    if workload == "qaoa":
        return qaoa_gates(m, round(edges * m / max(1, n)), layers)
    return qml_gates_pennylane(m)


def fit(sizes, seconds, *, workload: str, n: int, edges: int = 0, layers: int = 2) -> tuple[float, float, float]:
    """Least-squares ``(a, c, b)`` of ``t = a + c gates + b W``, dropping negative terms (then refitting)."""
    import numpy as np

    cols = np.array([[1.0, gates(workload, m, n=n, edges=edges, layers=layers),
                      units(workload, m, n=n, edges=edges, layers=layers)] for m in sizes])
    t = np.asarray(seconds, dtype=float)
    return tuple(nonnegative_fit(cols, t))


def qaoa_gates(n: int, edges: int, layers: int) -> int:
    """Gates of PennyLane's QAOA circuit: Hadamards, then per layer one ZZ term per edge and one RX per wire."""
    return n + layers * (edges + n)


def qml_gates_pennylane(n: int) -> int:
    """Gates of the CCQC TorchLayer: embedding, two layers of Rot + CRot decompositions (5 gates), final Rot."""
    return n + 2 * (n + 5 * n) + 1


def units(workload: str, m: int, *, n: int, edges: int = 0, layers: int = 2) -> float:
    """W(m): amplitudes x gates of the workload at ``m`` qubits (edges kept at the density of ``n``)."""
    if workload == "qaoa":
        e = round(edges * m / max(1, n))
        return 2.0**m * qaoa_gates(m, e, layers)
    return 2.0**m * qml_gates_pennylane(m)


def time_qaoa(target: Target, m: int, edges: int, layers: int) -> float:
    """Best seconds of one energy+gradient of the QAOA workload's circuit on ``target`` at ``m`` qubits."""
    from qhybrid.workloads.qaoa import make_simulator, parse_settings
    import networkx as nx

    settings = parse_settings({"n_nodes": str(m), "n_edges": str(edges), "n_layers": str(layers)})
    sim = make_simulator(nx.gnm_random_graph(m, edges, seed=1967), settings, target)
    params = [[0.3] * layers, [0.4] * layers]
    return _best(lambda: sim.energy_and_grad(params), repeats=3, cpu="process")


def time_qml(target: Target, m: int, batch: int) -> float:
    """Best seconds of one DressedQNN training step with the PennyLane layer on ``target``."""
    from qhybrid.qml import DressedQNN
    from qhybrid.qml.reference import pennylane_layer

    return _best(qml_step(DressedQNN(m, qlayer=pennylane_layer(m, target.name)), batch), repeats=2, cpu="process")


def time_sizes(target: dict, workload: str, sizes, edges, layers: int, batch: int) -> list[float]:
    """Best seconds of one iteration at each size (run by :func:`probe` in a fresh interpreter;
    ``target``: the :meth:`~qhybrid.devices.Target.record` of the device, rebuilt unparsed)."""
    device = Target.from_record(target)
    if workload == "qaoa":
        return [time_qaoa(device, m, e, layers) for m, e in zip(sizes, edges)]
    return [time_qml(device, m, batch) for m in sizes]


def probe(target: Target | str, workload: str, *, n: int, edges: int = 0, layers: int = 2, batch: int = 4,
          measure: bool = True) -> Probe:
    """Fit (or read from the cache) the probe of a device for a workload of ``n`` qubits.

    Args:
        target: the resolved device (a device string is resolved here, once).
        measure: False: nothing is run; a probe not cached is :data:`NOMINAL_PROBE` (``sizes`` empty).

    Raises:
        DeviceError: the device cannot be built here.
    """
    target = resolve(target)
    device = str(target)
    top = max(6, min(n, PROBE_MAX[workload]))
    sizes = (top - 4, top - 2, top)
    density = tuple(round(edges * m / max(1, n)) for m in sizes)
    key = f"probe | {device} | {workload} | sizes {sizes} | edges {density} | p {layers} | batch {batch} | {machine_key()}"
    path = cache_path()
    cached = _read_cache(path)
    if key in cached:
        d = cached[key]
        return Probe(d["device"], d["workload"], tuple(d["sizes"]), tuple(d["seconds"]), d["overhead_s"],
                     d["per_gate_s"], d["per_unit_s"])
    if not measure:
        return Probe(device, workload, (), (), *NOMINAL_PROBE[workload])
    times = tuple(isolated("probe.time_sizes", target.record(), workload, list(sizes), list(density), layers, batch))
    overhead, per_gate, per_unit = fit(sizes, times, workload=workload, n=n, edges=edges, layers=layers)
    result = Probe(device, workload, sizes, times, overhead, per_gate, per_unit)
    store(key, {"device": device, "workload": workload, "sizes": list(sizes), "seconds": list(times),
                "overhead_s": overhead, "per_gate_s": per_gate, "per_unit_s": per_unit, "measured": time.time()})
    return result


def probe_seconds(pr: Probe, *, n: int, edges: int = 0, layers: int = 2, state_bytes: int, l3_bytes: int,
                  core_ratio: float = 1.0) -> float:
    """The probe's seconds at ``n`` qubits on a machine whose cores are ``core_ratio`` times ours."""
    per_unit = pr.per_unit_s * (CACHE_CLIFF if STATES * state_bytes > l3_bytes else 1.0)
    g = gates(pr.workload, n, n=n, edges=edges, layers=layers)
    w = units(pr.workload, n, n=n, edges=edges, layers=layers)
    return (pr.overhead_s + pr.per_gate_s * g + per_unit * w) / core_ratio


def lightning_gpu_seconds(workload: str, *, n: int, edges: int = 0, layers: int = 2, batch: int = 1,
                          machine, item: int = 16) -> float:
    """lightning.gpu modelled: state passes at the GPU's bandwidth, plus a launch each.

    Adjoint differentiation as lightning does it (Jones & Gacon, arXiv:2009.02823): the forward
    pass (one read+write of the state per gate), ``H|psi>`` (one per observable term), then back
    through the gates un-applying each on psi and on lambda (two), and for each parametrized gate
    a copy of psi, its generator applied and an inner product (three more). A TorchLayer runs
    the batch sample by sample.
    """
    if workload == "qaoa":
        gates, params, terms = qaoa_gates(n, edges, layers), layers * (edges + n), edges
    else:  # two CNOTs of each CRot's decomposition are not parametrized
        gates, terms = qml_gates_pennylane(n), 1
        params = gates - 4 * n
    samples = 1 if workload == "qaoa" else batch
    passes = samples * (3 * gates + 3 * params + terms)
    per_pass = 2 * (2**n) * item / (machine.gpu_bandwidth_gbs * 1e9 * 0.75) + GPU_GATE_LAUNCH_S
    return passes * per_pass + (0.0 if workload == "qaoa" else 3e-3)
