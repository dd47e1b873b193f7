"""The QML calibration's measurements: the job's own training step and evaluation, fresh temporaries."""
from __future__ import annotations

from qhybrid.estimate import calibrate_qml


def test_qml_step_is_the_jobs_training_step(monkeypatch):
    """The calibration times workloads.qml.train_step on the batches a DataLoader draws (new ones each step),
    and its evaluation workloads.qml.evaluate on one batch of QML_EVAL samples."""
    import torch

    import qhybrid.workloads.qml as wm
    from qhybrid.qml import DressedQNN

    seen = []
    real_step, real_eval = wm.train_step, wm.evaluate
    monkeypatch.setattr(wm, "train_step", lambda net, opt, xb, yb: seen.append(xb.clone()) or real_step(net, opt, xb, yb))
    monkeypatch.setattr(wm, "evaluate", lambda model, x, y, where: seen.append(len(x)) or real_eval(model, x, y, where))
    model = DressedQNN(4, generator=torch.Generator().manual_seed(0))
    before = [p.detach().clone() for p in model.parameters()]
    step = calibrate_qml.qml_step(model, 8)
    for _ in range(5):  # past the end of the loader's 4 batches: it starts again
        step()
    assert len(seen) == 5 and all(x.shape == (8, 60) for x in seen) and not torch.equal(seen[0], seen[1])
    assert all(not torch.equal(a, b.detach()) for a, b in zip(before, model.parameters()))  # Adam stepped
    calibrate_qml.qml_eval(model, calibrate_qml.QML_EVAL)()
    assert seen[-1] == calibrate_qml.QML_EVAL and model.training


def test_fresh_temporaries_cost_something():
    assert 0 < calibrate_qml.measure_fresh(mib=40) < 100  # seconds per GB: page faults, not free, not stalled
    assert 0 < calibrate_qml.measure_touch(mib=32, pieces=2) < 100  # the layer's buffers' first touch


def test_the_first_touch_takes_at_most_an_eighth_of_the_free_memory(monkeypatch):
    import qhybrid.qml.adjoint as adjoint
    import qhybrid.sim.memory as memory

    sizes = []
    real = adjoint.new_buffer
    monkeypatch.setattr(memory, "available_bytes", lambda device="cpu", **_: 256 * 2**20)
    monkeypatch.setattr(adjoint, "new_buffer", lambda numel, like: sizes.append(numel * 8) or real(numel, like))
    assert calibrate_qml.measure_touch() > 0
    assert sizes == [8 * 2**20] * 4  # 32 MiB in 4 pieces, not 1 GiB
