"""The memory estimate and the refusal before allocating."""
from __future__ import annotations

import pytest
import torch

from qhybrid.errors import MemoryLimitError
from qhybrid.sim import Circuit, Measurement, Observable, adjoint_jacobian, simulate
from qhybrid.sim.memory import available_bytes, check_memory, required_bytes


def test_required_bytes():
    assert required_bytes(10, batch=3, dtype=torch.complex64, n_states=2) == 2 * 3 * 1024 * 8
    assert required_bytes(20) == 2 * 2**20 * 16


def test_available_bytes_reads_meminfo():
    free = available_bytes("cpu")
    assert free is None or free > 0


def test_refusal_names_both_figures():
    with pytest.raises(MemoryLimitError, match=r"needs 32.00 GiB .* only 1.00 GiB"):
        check_memory(30, n_states=2, available=2**30)


def test_simulate_refuses_too_many_qubits():
    c = Circuit(45, (), (Measurement("expval", Observable.pauli({"Z": 1})),))
    with pytest.raises(MemoryLimitError, match="45 qubits"):
        simulate(c)
    with pytest.raises(MemoryError):
        adjoint_jacobian(c)


def test_a_recent_reading_answers_small_requests_only(monkeypatch):
    """A small circuit's call checks memory several times: /proc/meminfo is read once a second
    for requests of at most a quarter of the last reading; a larger one reads afresh, and a
    state that does not fit is refused right after a reading that was reused."""
    from qhybrid.sim import memory

    reads = []
    monkeypatch.setattr(memory, "_read_meminfo", lambda: reads.append(1) or 2**30)
    monkeypatch.setattr(memory, "_last_reading", [float("-inf"), None])
    for _ in range(3):
        check_memory(10)
    assert len(reads) == 1
    assert memory.available_bytes("cpu", needed=2**29) == 2**30 and len(reads) == 2
    assert memory.available_bytes("cpu") == 2**30 and len(reads) == 3  # no need given: always fresh
    with pytest.raises(MemoryLimitError, match="only 1.00 GiB"):
        check_memory(26)
