"""Helpers for the engine tests: random circuits, the unfused torch reference run, tolerances."""
from __future__ import annotations

import numpy as np
import torch

from qhybrid.sim import Circuit, Operation
from qhybrid.sim.gates import GATES

PARAM_GATES_1 = ["RX", "RY", "RZ", "PhaseShift"]
FIXED_1 = ["Hadamard", "PauliX", "PauliY", "PauliZ", "S", "T", "SX"]
GATES_2 = ["CNOT", "CZ", "CY", "SWAP", "ISWAP", "IsingXX", "IsingYY", "IsingZZ", "IsingXY", "CRX", "CRY", "CRZ",
           "ControlledPhaseShift", "SingleExcitation", "SingleExcitationPlus", "SingleExcitationMinus", "PSWAP"]


def random_ops(n, depth, rng, *, batch=None, trainable=True):
    """A list of engine Operations: a mix of 1-, 2-, 3-qubit and multi-wire gates."""
    ops = []
    for _ in range(depth):
        r = rng.random()
        if r < 0.45:
            name = str(rng.choice(PARAM_GATES_1 + FIXED_1))
            wires = (int(rng.integers(n)),)
        elif r < 0.85:
            name = str(rng.choice(GATES_2))
            wires = tuple(int(w) for w in rng.choice(n, 2, replace=False))
        elif r < 0.95:
            name = "MultiRZ"
            k = int(rng.integers(1, min(n, 4) + 1))
            wires = tuple(int(w) for w in rng.choice(n, k, replace=False))
        else:
            name = str(rng.choice(["Toffoli", "CSWAP"]))
            wires = tuple(int(w) for w in rng.choice(n, 3, replace=False))
        npar = GATES[name].num_params
        if npar:
            p = rng.uniform(-np.pi, np.pi, size=batch) if batch else float(rng.uniform(-np.pi, np.pi))
            ops.append(Operation(name, wires, (p,), (0,) if trainable else ()))
        else:
            ops.append(Operation(name, wires))
    return ops


def reference_state(circuit, dtype=torch.complex128):
    """The final state by the torch reference path, no fusion (what fast paths are tested against)."""
    from qhybrid.sim import final_state

    return final_state(circuit, dtype=dtype, kernels="torch", fuse=False)


def assert_close(a, b, tol):
    a = a.detach().cpu().numpy() if torch.is_tensor(a) else np.asarray(a)
    b = b.detach().cpu().numpy() if torch.is_tensor(b) else np.asarray(b)
    np.testing.assert_allclose(a, b, atol=tol, rtol=0)


TOL = {torch.complex128: 1e-10, torch.complex64: 1e-5}


def make_circuit(n, ops, measurements=(), initial_state=None):
    return Circuit(n, tuple(ops), tuple(measurements), initial_state)
