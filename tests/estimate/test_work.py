"""The work model's counts against what the engines really do at small sizes."""
from __future__ import annotations

import networkx as nx
import pytest

from qhybrid.errors import SpecError
from qhybrid.estimate import work


def _count_kernel_calls(monkeypatch) -> dict:
    from qhybrid.qaoa import numba_kernels as nk

    calls = {}
    for name in ("fwd_low", "fwd_high", "fwd_last_low", "bwd_high", "bwd_low", "bwd_high_stored", "bwd_low_stored"):
        original = getattr(nk, name)

        def counted(*args, _name=name, _f=original):
            calls[_name] = calls.get(_name, 0) + 1
            return _f(*args)

        monkeypatch.setattr(nk, name, counted)
    return calls


@pytest.mark.parametrize("layers", [1, 2, 3])
@pytest.mark.parametrize("budget", [None, 1])  # the stored-state sweep, and the un-apply sweep when it does not fit
def test_qaoa_kernel_calls_match_the_engine(monkeypatch, layers, budget):
    from qhybrid.qaoa import QAOA, memory

    assert QAOA.STORE_BUDGET == memory.STORE_BUDGET  # the engine's budget is the one the model reads
    if budget is not None:
        monkeypatch.setattr(QAOA, "STORE_BUDGET", budget)
        monkeypatch.setattr(memory, "STORE_BUDGET", budget)
    q = QAOA(nx.gnm_random_graph(10, 15, seed=1967))
    q.energy_and_grad([[0.3] * layers, [0.4] * layers])  # a first call's one-time kernel warm-up not counted
    calls = _count_kernel_calls(monkeypatch)
    q.energy_and_grad([[0.3] * layers, [0.4] * layers])
    w = work.qaoa_work(10, layers)
    assert sum(calls.values()) == w.calls == 4 * layers + 1
    assert work.qaoa_stored(10, layers) == (budget is None)
    assert ("bwd_high_stored" in calls) == (budget is None)  # the model's sweep is the one the engine ran


def test_qaoa_bytes_follow_the_state():
    small, big = work.qaoa_work(20, 2), work.qaoa_work(21, 2)
    assert big.bytes == pytest.approx(2 * small.bytes)
    assert work.qaoa_work(20, 2, dtype="complex64").bytes < small.bytes
    # Max-Cut simulates half the state; Max-Clique all of it
    assert work.qaoa_work(20, 2, problem="maxclique").bytes == pytest.approx(big.bytes)
    assert small.params == 4 and small.memory_bytes > 2 * 2**19 * 16


def test_qml_gates_and_parameters_match_the_model():
    from qhybrid.qml import DressedQNN, QuantumLayer

    for n in (4, 6, 9):
        assert work.qml_gates(n) == QuantumLayer(n).plan.gates
        assert work.qml_work(n, 4).params == sum(p.numel() for p in DressedQNN(n).parameters())


def test_qml_work_scales_with_batch_and_wires():
    one, four = work.qml_work(10, 1), work.qml_work(10, 4)
    assert four.flops == pytest.approx(4 * one.flops) and four.bytes == pytest.approx(4 * one.bytes)
    assert work.qml_work(11, 1).flops > 2 * one.flops
    assert four.memory_bytes - work.RUNTIME_BYTES == 4 * (one.memory_bytes - work.RUNTIME_BYTES)


def test_gpu_work_counts_launches_and_memory():
    cpu, gpu = work.qaoa_work(24, 2), work.qaoa_work(24, 2, gpu=True)
    assert gpu.calls > cpu.calls and gpu.memory_bytes > cpu.memory_bytes


def test_bad_dtype_is_named():
    with pytest.raises(SpecError, match="dtype 'float16'.*complex128, complex64"):
        work.qaoa_work(10, 1, dtype="float16")


@pytest.mark.parametrize("threads", [1, 2, 4, 48])
def test_qml_split_is_how_the_batched_kernels_cut_a_call(monkeypatch, threads):
    """Busy threads and hand-offs as sim.batched._calls cuts run/sweep (on ``threads`` threads)."""
    import numpy as np

    from qhybrid.sim import batched, pool

    monkeypatch.setattr(batched, "threads_for", lambda size: pool.threads_for(size, threads=threads))
    for n in (8, 10, 11, 14, 16, 17, 18):
        for batch in (1, 2, 16, 64):
            planes = np.empty((batch, 2, 2**n))
            gates = len(work.qml_gates(n))
            parts, split = batched._calls(planes, batch * 2**n, gates)
            busy = len(parts) if parts is not None else split
            calls = work.QML_CALLS if parts is not None else 2 * work.qml_blocks(n) + 3
            assert work.qml_split(n, batch, threads) == (busy, calls), (n, batch)


def test_qml_copies_match_the_engine_in_a_step(monkeypatch):
    """A training step makes no planar copy (QML_COPIES = 0): the kernels write and read the planes."""
    import torch

    from qhybrid.qml import DressedQNN
    from qhybrid.sim import batched

    calls = {}
    for name in ("to_planes", "from_planes"):
        real = getattr(batched, name)
        monkeypatch.setattr(batched, name, lambda *a, _real=real, _name=name, **k: (
            calls.__setitem__(_name, calls.get(_name, 0) + 1), _real(*a, **k))[1])
    DressedQNN(6, generator=torch.Generator().manual_seed(0))(torch.rand(4, 60, dtype=torch.float64)).sum().backward()
    assert calls.get("to_planes", 0) + calls.get("from_planes", 0) == work.QML_COPIES == 0


@pytest.mark.parametrize("threads", [1, 2, 48])
def test_qml_split_of_an_evaluation_counts_the_forward_calls_alone(monkeypatch, threads):
    """An evaluation runs batched.run alone: one hand-off a call, or one a gate when the gates split."""
    import numpy as np

    from qhybrid.sim import batched, pool

    monkeypatch.setattr(batched, "threads_for", lambda size: pool.threads_for(size, threads=threads))
    for n in (8, 12, 16, 17):
        for batch in (2, 52):
            gates = len(work.qml_gates(n))
            parts, split = batched._calls(np.empty((batch, 2, 2**n)), batch * 2**n, gates)
            busy = len(parts) if parts is not None else split
            calls = work.QML_EVAL_CALLS if parts is not None else work.qml_blocks(n) + 2
            assert work.qml_split(n, batch, threads, forward=True) == (busy, calls), (n, batch)


def test_qml_eval_work_is_the_forward_pass_the_engine_runs(monkeypatch):
    """The job's evaluation (no gradient) calls batched.run once and copies to planes once:
    what qml_eval_work counts; its arithmetic is a fraction of a step's on as many samples."""
    import torch

    from qhybrid.qml import DressedQNN
    from qhybrid.sim import batched
    from qhybrid.workloads.qml import evaluate

    calls = {}
    for name in ("product", "run", "observe", "sweep", "factor_gradients", "to_planes", "from_planes"):
        real = getattr(batched, name)
        monkeypatch.setattr(batched, name, lambda *a, _real=real, _name=name, **k: (
            calls.__setitem__(_name, calls.get(_name, 0) + 1), _real(*a, **k))[1])
    model = DressedQNN(6, generator=torch.Generator().manual_seed(0))
    evaluate(model, torch.rand(10, 60, dtype=torch.float64), torch.ones(10, dtype=torch.float64), torch.device("cpu"))
    assert calls == {"product": 1, "run": 1, "observe": 1} and work.QML_EVAL_CALLS == 3 and work.QML_EVAL_COPIES == 0
    ev, step = work.qml_eval_work(6, 10), work.qml_work(6, 10)
    assert ev.calls == work.QML_EVAL_CALLS and 0.2 * step.flops < ev.flops < 0.5 * step.flops and ev.bytes < step.bytes
    assert ev.serial_bytes == 0.0


def test_qml_memory_is_one_chunk_and_calls_repeat_per_chunk():
    """The layer holds one chunk's states (2 a sample on the numba kernels); the kernel calls repeat per chunk;
    no state-sized temporaries (<Z0> is read from the planar states in place)."""
    whole, chunked = work.qml_work(26, 16), work.qml_work(26, 16, chunk=2)
    assert whole.memory_bytes == 2 * 16 * 2**26 * 16 + work.RUNTIME_BYTES
    assert chunked.memory_bytes == 2 * 2 * 2**26 * 16 + work.RUNTIME_BYTES
    assert (whole.calls, chunked.calls) == (work.QML_CALLS, 8 * work.QML_CALLS) and chunked.bytes == whole.bytes
    assert work.qml_eval_work(26, 52, chunk=3).calls == 18 * work.QML_EVAL_CALLS and whole.fresh_bytes == 0.0
