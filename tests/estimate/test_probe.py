"""The PennyLane probe: the fit, a real probe of lightning.qubit, its cache."""
from __future__ import annotations

import pytest

from qhybrid.estimate import probe


def test_fit_recovers_overhead_gate_and_amplitude_costs():
    sizes = (8, 10, 12)
    a, c, b = 2e-3, 1e-4, 5e-9
    times = [a + c * probe.gates("qml", m, n=16) + b * probe.units("qml", m, n=16) for m in sizes]
    fitted = probe.fit(sizes, times, workload="qml", n=16)
    assert fitted == pytest.approx((a, c, b), rel=1e-6)


def test_fit_drops_a_negative_term():
    sizes = (8, 10, 12)
    times = [1e-3 + 2e-9 * probe.units("qaoa", m, n=20, edges=30) for m in sizes]
    times[0] += 5e-4  # noise that would make the gate term negative
    a, c, b = probe.fit(sizes, times, workload="qaoa", n=20, edges=30)
    assert min(a, c, b) >= 0 and b > 0


def test_probe_lightning_qubit_then_from_the_cache(monkeypatch):
    pr = probe.probe("local:pennylane/lightning.qubit", "qaoa", n=8, edges=12, layers=1)
    assert pr.sizes == (4, 6, 8) and all(t > 0 for t in pr.seconds)
    at = probe.probe_seconds(pr, n=8, edges=12, layers=1, state_bytes=2**8 * 16, l3_bytes=2**25)
    assert at >= pr.overhead_s

    def no_measuring(*args):
        raise AssertionError("the probe should come from the cache")

    monkeypatch.setattr(probe, "isolated", no_measuring)
    assert probe.probe("local:pennylane/lightning.qubit", "qaoa", n=8, edges=12, layers=1) == pr


def test_past_the_cache_each_amplitude_costs_more():
    pr = probe.Probe("d", "qaoa", (12, 14, 16), (0.01, 0.03, 0.1), 0.0, 0.0, 1e-9)
    inside = probe.probe_seconds(pr, n=20, edges=30, state_bytes=1, l3_bytes=probe.STATES)
    outside = probe.probe_seconds(pr, n=20, edges=30, state_bytes=2, l3_bytes=probe.STATES)
    assert outside == pytest.approx(probe.CACHE_CLIFF * inside)


def test_lightning_gpu_counts_the_adjoint_passes():
    from qhybrid.estimate import hardware
    from qhybrid.jobs.instances import get_instance

    v100 = hardware.instance_machine(get_instance("ml.p3.2xlarge"))
    per_pass = 2 * 2**20 * 16 / (v100.gpu_bandwidth_gbs * 1e9 * 0.75) + probe.GPU_GATE_LAUNCH_S
    gates, params = probe.qaoa_gates(20, 30, 2), 2 * (30 + 20)
    t = probe.lightning_gpu_seconds("qaoa", n=20, edges=30, layers=2, machine=v100)
    assert t == pytest.approx((3 * gates + 3 * params + 30) * per_pass)  # forward, un-apply twice, 3 per parameter
    one = probe.lightning_gpu_seconds("qml", n=20, batch=1, machine=v100)
    assert probe.lightning_gpu_seconds("qml", n=20, batch=8, machine=v100) == pytest.approx(8 * (one - 3e-3) + 3e-3)
