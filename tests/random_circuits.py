"""Seeded random circuits and observables over the engine's native gate set.

Shared by the reference and cross-check tests (``tests/`` is on ``sys.path``
through its conftest). A circuit is a *spec*: a list of :class:`Gate` rows
(name, wires, number of trainable parameters, fixed matrix if any, adjoint
flag) plus a parameter vector, so the same circuit can be built with plain
floats, broadcast vectors or autograd/torch tensors.

Example:
    >>> rng = np.random.default_rng(1)
    >>> spec, params = random_circuit(rng, n_wires=4, depth=20)
    >>> ops = build(spec, params)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pennylane as qml

# name: (number of wires, number of parameters); wires None = any number >= 2
GATES = {
    "PauliX": (1, 0), "PauliY": (1, 0), "PauliZ": (1, 0), "Hadamard": (1, 0),
    "S": (1, 0), "T": (1, 0), "SX": (1, 0),
    "RX": (1, 1), "RY": (1, 1), "RZ": (1, 1), "PhaseShift": (1, 1), "Rot": (1, 3),
    "CNOT": (2, 0), "CY": (2, 0), "CZ": (2, 0), "SWAP": (2, 0), "ISWAP": (2, 0),
    "CSWAP": (3, 0), "Toffoli": (3, 0),
    "IsingXX": (2, 1), "IsingXY": (2, 1), "IsingYY": (2, 1), "IsingZZ": (2, 1),
    "MultiRZ": (None, 1),
    "CRX": (2, 1), "CRY": (2, 1), "CRZ": (2, 1), "CRot": (2, 3),
    "ControlledPhaseShift": (2, 1),
    "SingleExcitation": (2, 1), "SingleExcitationPlus": (2, 1), "SingleExcitationMinus": (2, 1),
    "DoubleExcitation": (4, 1), "DoubleExcitationPlus": (4, 1), "DoubleExcitationMinus": (4, 1),
    "QubitUnitary": (None, 0), "DiagonalUnitary": (None, 0), "ControlledQubitUnitary": (None, 0),
    "GlobalPhase": (0, 1),
}
DIAGONAL = ["PauliZ", "S", "T", "RZ", "PhaseShift", "CZ", "IsingZZ", "MultiRZ", "CRZ",
            "ControlledPhaseShift", "DiagonalUnitary", "GlobalPhase"]
SINGLE = ["PauliX", "PauliY", "PauliZ", "Hadamard", "S", "T", "SX", "RX", "RY", "RZ",
          "PhaseShift", "Rot"]
ADJOINTABLE = ["S", "T", "SX", "RX", "Rot", "IsingXY", "CRot", "ISWAP", "QubitUnitary",
               "DoubleExcitation", "SingleExcitationPlus", "ControlledQubitUnitary"]
# gates with trainable parameters that adjoint differentiation must handle
PARAMETRIC = [g for g, (_, p) in GATES.items() if p > 0]


@dataclass(frozen=True)
class Gate:
    """One row of a circuit spec."""

    name: str
    wires: tuple
    n_params: int = 0
    matrix: np.ndarray | None = None
    adjoint: bool = False


def random_unitary(rng: np.random.Generator, dim: int) -> np.ndarray:
    """A Haar-ish random unitary (QR of a complex Gaussian, phases fixed)."""
    z = (rng.normal(size=(dim, dim)) + 1j * rng.normal(size=(dim, dim))) / np.sqrt(2)
    q, r = np.linalg.qr(z)
    return q * (np.diag(r) / np.abs(np.diag(r)))


def random_gate(rng: np.random.Generator, name: str, n_wires: int, wires=None) -> Gate:
    """A Gate called ``name`` on random distinct wires (or on ``wires``)."""
    k, n_params = GATES[name]
    if name in ("MultiRZ", "QubitUnitary", "DiagonalUnitary"):
        k = int(rng.integers(1 if name != "MultiRZ" else 2, min(4, n_wires) + 1))
    elif name == "ControlledQubitUnitary":
        k = int(rng.integers(2, min(3, n_wires) + 1))
    if wires is None:
        wires = tuple(int(w) for w in rng.choice(n_wires, size=k, replace=False))
    matrix = None
    if name == "QubitUnitary":
        matrix = random_unitary(rng, 2 ** len(wires))
    elif name == "DiagonalUnitary":
        matrix = np.diag(np.exp(1j * rng.uniform(0, 2 * np.pi, 2 ** len(wires))))
    elif name == "ControlledQubitUnitary":
        matrix = random_unitary(rng, 2)
    return Gate(name, tuple(wires), n_params, matrix)


def _segment(rng, n_wires, length, kind):
    if kind == "diagonal":  # a long run of diagonal gates: the engine fuses it into one pass
        return [random_gate(rng, str(rng.choice(DIAGONAL)), n_wires) for _ in range(length)]
    if kind == "single":  # a run of 1-qubit gates on one wire: fused into one 2x2
        w = int(rng.integers(n_wires))
        return [random_gate(rng, str(rng.choice(SINGLE)), n_wires, wires=(w,)) for _ in range(length)]
    gates = []
    names = [g for g in GATES if GATES[g][0] is None or GATES[g][0] <= n_wires]
    for _ in range(length):
        gate = random_gate(rng, str(rng.choice(names)), n_wires)
        if gate.name in ADJOINTABLE and rng.random() < 0.3:
            gate = Gate(gate.name, gate.wires, gate.n_params, gate.matrix, adjoint=True)
        gates.append(gate)
    return gates


def random_circuit(rng: np.random.Generator, *, n_wires: int, depth: int, batch: int | None = None):
    """A random spec of about ``depth`` gates and its parameters.

    The circuit starts with a layer of Hadamards/RYs (so diagonal gates act on
    a superposition) and alternates general segments with long diagonal runs
    and single-wire runs.

    Returns:
        ``(spec, params)``; ``params`` has shape ``(P,)``, or ``(P, batch)``.
    """
    spec = [Gate("Hadamard", (w,)) if w % 2 else Gate("RY", (w,), 1) for w in range(n_wires)]
    kinds = ["general", "diagonal", "general", "single", "diagonal", "single"]
    i = 0
    while len(spec) < depth:
        spec += _segment(rng, n_wires, int(rng.integers(4, 12)), kinds[i % len(kinds)])
        i += 1
    n_params = sum(g.n_params for g in spec)
    shape = (n_params,) if batch is None else (n_params, batch)
    return spec, rng.uniform(-np.pi, np.pi, size=shape)


def build(spec, params) -> list:
    """The PennyLane operations of ``spec``, taking parameters from ``params`` in order."""
    ops, i = [], 0
    for g in spec:
        p = [params[i + j] for j in range(g.n_params)]
        i += g.n_params
        if g.name in ("QubitUnitary", "DiagonalUnitary"):
            op = qml.QubitUnitary(g.matrix, wires=g.wires)
        elif g.name == "ControlledQubitUnitary":
            op = qml.ControlledQubitUnitary(g.matrix, wires=g.wires)
        elif g.name == "GlobalPhase":
            op = qml.GlobalPhase(p[0])
        else:
            op = getattr(qml, g.name)(*p, wires=g.wires)
        ops.append(qml.adjoint(op) if g.adjoint else op)
    return ops


def random_pauli_word(rng: np.random.Generator, n_wires: int, *, only_z: bool = False):
    """A Pauli word on a random subset of 1..n wires (PauliZ only if ``only_z``)."""
    k = int(rng.integers(1, n_wires + 1))
    wires = sorted(int(w) for w in rng.choice(n_wires, size=k, replace=False))
    letters = "Z" * k if only_z else "".join(rng.choice(list("XYZ"), size=k))
    ops = [getattr(qml, "Pauli" + c)(w) for c, w in zip(letters, wires)]
    return ops[0] if k == 1 else qml.prod(*ops)


def random_hermitian(rng: np.random.Generator, dim: int) -> np.ndarray:
    """A random Hermitian matrix."""
    a = rng.normal(size=(dim, dim)) + 1j * rng.normal(size=(dim, dim))
    return (a + a.conj().T) / 2


def random_hamiltonian(rng: np.random.Generator, n_wires: int, *, terms: int = 12, z_fraction=0.5):
    """A Hamiltonian of Pauli words, many of them all-Z, coefficients in [-1, 1]."""
    coeffs = rng.uniform(-1, 1, size=terms)
    words = [random_pauli_word(rng, n_wires, only_z=rng.random() < z_fraction) for _ in range(terms)]
    return qml.Hamiltonian(coeffs, words)


def random_observables(rng: np.random.Generator, n_wires: int) -> dict:
    """A named zoo of Hermitian observables (n_wires >= 2): Pauli words, Hermitian, Projector,
    Prod, Sum, SProd; the factors of every product act on distinct wires."""
    w = [int(x) for x in rng.choice(n_wires, size=min(3, n_wires), replace=False)]
    return {
        "pauli_word": random_pauli_word(rng, n_wires),
        "all_z": random_pauli_word(rng, n_wires, only_z=True),
        "hamiltonian": random_hamiltonian(rng, n_wires),
        "z_hamiltonian": random_hamiltonian(rng, n_wires, z_fraction=1.0),
        "hermitian": qml.Hermitian(random_hermitian(rng, 4), wires=w[:2]),
        "projector_basis": qml.Projector([1, 0], wires=w[:2]),
        "projector_state": qml.Projector(random_unitary(rng, 4)[:, 0], wires=w[:2]),
        "prod": qml.prod(qml.PauliX(w[0]), qml.Hermitian(random_hermitian(rng, 2), wires=w[1])),
        "sum": qml.sum(qml.s_prod(0.7, qml.PauliY(w[0])), qml.PauliZ(w[1]) @ qml.PauliX(w[0]),
                       qml.Hermitian(random_hermitian(rng, 2), wires=w[-1])),
        "sprod": qml.s_prod(-1.3, qml.PauliZ(w[0]) @ qml.PauliZ(w[-1])),
        "hadamard": qml.Hadamard(w[0]),
        "identity": qml.Identity(w[0]),
    }
