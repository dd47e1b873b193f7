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
