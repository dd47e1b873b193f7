"""simulate / final_state: basics, initial states, broadcasting, dtypes, CUDA."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from simhelpers import TOL, assert_close, make_circuit, random_ops, reference_state

from qhybrid.sim import Circuit, Measurement, Observable, Operation, final_state, simulate


def test_bell_expval():
    c = Circuit(2, (Operation("Hadamard", (0,)), Operation("CNOT", (0, 1))),
                (Measurement("expval", Observable.pauli({"ZZ": 1.0, "XX": 0.5})),))
    (v,) = simulate(c)
    np.testing.assert_allclose(v.numpy(), [1.5], atol=1e-12)


def test_initial_state_and_batch():
    psi = np.array([0, 1, 0, 0], dtype=complex)
    c = Circuit(2, (Operation("RX", (0,), (np.array([0.0, np.pi]),)),), (Measurement("probs"),), initial_state=psi)
    (p,) = simulate(c)
    np.testing.assert_allclose(p.numpy(), [[0, 1, 0, 0], [0, 0, 0, 1]], atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.complex128, torch.complex64])
def test_dtype_tolerance(dtype, rng):
    c = make_circuit(6, random_ops(6, 50, rng))
    s = final_state(c, dtype=dtype)
    assert s.dtype == dtype
    assert_close(s.to(torch.complex128), reference_state(c), TOL[dtype] * 10)


@pytest.mark.cuda
def test_cuda_matches_cpu(rng):
    c = make_circuit(6, random_ops(6, 50, rng))
    assert_close(final_state(c, device="cuda").cpu(), final_state(c), 1e-10)
