"""The gate table: one line per gate, rules as data.

Each :class:`Gate` row says how many wires and parameters a gate takes, how
to build its matrix (or, for diagonal gates, its diagonal) from a batch of
parameters, and its generator ``G`` for the adjoint method, with the
convention ``U(theta) = exp(i * theta * G)`` so that ``dU/dtheta = i G U``.

Matrix and diagonal functions take ``params``, a list of real numpy arrays of
shape ``(P,)`` (``P`` = 1, or the broadcast batch), and ``k`` (the number of
wires), and return ``(P, d, d)`` or ``(P, d)`` complex numpy arrays (tiny
arrays are much cheaper in numpy); ``gate_matrix`` / ``gate_diagonal`` hand
them over as tensors of the requested dtype and device. Generators are constant
``(d, d)`` numpy arrays (``d = 2**k``), or a diagonal ``(d,)`` array when the
gate is diagonal. ``num_wires`` of ``None`` means "any number".

The one-qubit rotations are written once, as forms (:mod:`.gateforms`) that
give both their builder on arrays and their ``scalar`` form: the same entries
from Python floats as Python numbers, for callers that multiply many 2x2
matrices without a numpy call per gate.

Public names: ``GATES`` (the table), ``Gate``, ``gate_matrix(name, params, k,
dtype, device, adjoint=False)``, ``gate_diagonal(...)``, ``gate_generator(name,
k, adjoint=False)``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from ..errors import OperationError
from .gateforms import diagonal_of, matrix_of, phase_form, rot_form, rx_form, ry_form, rz_form, scalar_of

_I2 = np.eye(2)
_X = np.array([[0, 1], [1, 0]], dtype=complex)
_Y = np.array([[0, -1j], [1j, 0]], dtype=complex)
_Z = np.array([[1, 0], [0, -1]], dtype=complex)
_H = np.array([[1, 1], [1, -1]], dtype=complex) / math.sqrt(2)
_SX = 0.5 * np.array([[1 + 1j, 1 - 1j], [1 - 1j, 1 + 1j]])
_P1 = np.diag([0.0, 1.0]).astype(complex)
_SWAP = np.eye(4)[[0, 2, 1, 3]].astype(complex)
_ISWAP = np.array([[1, 0, 0, 0], [0, 0, 1j, 0], [0, 1j, 0, 0], [0, 0, 0, 1]])


def _ctrl(u: np.ndarray, n_ctrl: int = 1) -> np.ndarray:
    d = u.shape[0]
    out = np.eye(d * 2**n_ctrl, dtype=complex)
    out[-d:, -d:] = u
    return out


def _const(m):
    m = np.asarray(m, dtype=complex)[None]
    return lambda p, k: m


def _cs(p):
    t = p[0] / 2
    return np.cos(t), np.sin(t)


def _mat(P, d, entries):
    """(P, d, d) complex from {(i, j): value-or-(P,) array}; zeros elsewhere."""
    out = np.zeros((P, d, d), dtype=complex)
    for (i, j), v in entries.items():
        out[:, i, j] = v
    return out


_rx, _ry, _rot = matrix_of(rx_form), matrix_of(ry_form), matrix_of(rot_form)


def _embed(inner_fn, d, pos):
    """Put a (P, m, m) block at indices ``pos`` of an identity of size d."""
    pos = np.asarray(pos)

    def f(p, k):
        blk = inner_fn(p, k)
        out = np.repeat(np.eye(d, dtype=complex)[None], blk.shape[0], axis=0)
        out[:, pos[:, None], pos[None, :]] = blk
        return out

    return f


def _pair(a, b):
    """Two-qubit rotation exp(-i theta/2 A(x)B)."""
    ab = np.kron(a, b)

    def f(p, k):
        c, s = _cs(p)
        return c[:, None, None] * np.eye(4) - 1j * s[:, None, None] * ab

    return f


def _isingxy(p, k):
    c, s = _cs(p)
    return _mat(len(c), 4, {(0, 0): 1, (1, 1): c, (1, 2): 1j * s, (2, 1): 1j * s, (2, 2): c, (3, 3): 1})


def _excitation(d, i, j, phase_sign):
    """Givens rotation between basis states i and j; other states get exp(i*sign*theta/2)."""

    def f(p, k):
        c, s = _cs(p)
        ph = np.exp(1j * phase_sign * p[0] / 2) * np.ones_like(c)
        out = np.zeros((len(c), d, d), dtype=complex)
        out[:, np.arange(d), np.arange(d)] = ph[:, None]
        out[:, i, i] = c
        out[:, j, j] = c
        out[:, i, j] = -s
        out[:, j, i] = s
        return out

    return f


def _excitation_gen(d, i, j, phase_sign):
    g = np.eye(d, dtype=complex) * (phase_sign / 2)
    g[i, i] = g[j, j] = 0
    g[i, j], g[j, i] = 0.5j, -0.5j
    return g


def _crot(p, k):
    blk = _rot(p, k)
    out = np.repeat(np.eye(4, dtype=complex)[None], blk.shape[0], axis=0)
    out[:, 2:, 2:] = blk
    return out


def _pswap(p, k):
    e = np.exp(1j * p[0])
    return _mat(len(e), 4, {(0, 0): 1, (1, 2): e, (2, 1): e, (3, 3): 1})


def _zparity(k):
    """(+1/-1) eigenvalues of Z x ... x Z on k wires, wire 0 most significant."""
    idx = np.arange(2**k)
    bits = np.array([bin(i).count("1") for i in idx])
    return 1.0 - 2.0 * (bits % 2)


def _rz_diag(k):
    par = _zparity(k) if k is not None else None

    def f(p, kk):
        pr = _zparity(kk) if par is None else par
        return np.exp(-0.5j * p[0][:, None] * pr)

    return f


def _phase_diag(d):
    """diag(1, ..., 1, e^{i phi}) on d entries."""

    def f(p, k):
        out = np.ones((len(p[0]), d), dtype=complex)
        out[:, -1] = np.exp(1j * p[0])
        return out

    return f


def _const_diag(vals):
    v = np.asarray(vals, dtype=complex)[None]
    return lambda p, k: v


def _crz_diag(p, k):
    e = np.exp(-0.5j * p[0])
    one = np.ones_like(e)
    return np.stack([one, one, e, e.conj()], -1)


def _gphase_diag(p, k):
    return np.repeat(np.exp(-1j * p[0])[:, None], 2**k, axis=1)


@dataclass(frozen=True)
class Gate:
    """One row of the gate table.

    ``matrix`` builds ``(P, d, d)``; ``diagonal`` (diagonal gates only) builds
    ``(P, d)``; ``generator(k)`` returns ``G`` (a ``(d,)`` diagonal when the
    gate is diagonal) or is ``None`` when the gate has no single generator;
    ``scalar(*floats)`` (one-qubit forms only) returns from Python floats, as
    Python numbers, what ``matrix`` / ``diagonal`` build from arrays (from the same
    form): the entries ``(a, b, c, d)`` row by row, or ``(d0, d1)``.
    """

    num_wires: Optional[int]
    num_params: int
    matrix: Optional[Callable] = None
    diagonal: Optional[Callable] = None
    generator: Optional[Callable] = None
    scalar: Optional[Callable] = None

    @property
    def is_diagonal(self) -> bool:
        return self.diagonal is not None


def _g(m):
    m = np.asarray(m, dtype=complex)
    return lambda k: m


def _D(vals):
    return Gate(1 if len(vals) == 2 else (len(vals).bit_length() - 1), 0, diagonal=_const_diag(vals))


_ZZ = np.kron(_Z, _Z)
#: The table. name: Gate(num_wires, num_params, matrix, diagonal, generator)
GATES: dict[str, Gate] = {
    "Identity": Gate(None, 0, diagonal=lambda p, k: np.ones((1, 2**k), dtype=complex)),
    "PauliX": Gate(1, 0, _const(_X)),
    "PauliY": Gate(1, 0, _const(_Y)),
    "PauliZ": _D([1, -1]),
    "Hadamard": Gate(1, 0, _const(_H)),
    "S": _D([1, 1j]),
    "T": _D([1, np.exp(1j * np.pi / 4)]),
    "SX": Gate(1, 0, _const(_SX)),
    "RX": Gate(1, 1, _rx, generator=_g(-0.5 * _X), scalar=scalar_of(rx_form)),
    "RY": Gate(1, 1, _ry, generator=_g(-0.5 * _Y), scalar=scalar_of(ry_form)),
    "RZ": Gate(1, 1, diagonal=diagonal_of(rz_form), generator=_g(-0.5 * np.diag(_Z)), scalar=scalar_of(rz_form)),
    "PhaseShift": Gate(1, 1, diagonal=diagonal_of(phase_form), generator=_g([0, 1]), scalar=scalar_of(phase_form)),
    "U1": Gate(1, 1, diagonal=diagonal_of(phase_form), generator=_g([0, 1]), scalar=scalar_of(phase_form)),
    "Rot": Gate(1, 3, _rot, scalar=scalar_of(rot_form)),
    "CNOT": Gate(2, 0, _const(_ctrl(_X))),
    "CY": Gate(2, 0, _const(_ctrl(_Y))),
    "CZ": _D([1, 1, 1, -1]),
    "SWAP": Gate(2, 0, _const(_SWAP)),
    "ISWAP": Gate(2, 0, _const(_ISWAP)),
    "IsingXX": Gate(2, 1, _pair(_X, _X), generator=_g(-0.5 * np.kron(_X, _X))),
    "IsingYY": Gate(2, 1, _pair(_Y, _Y), generator=_g(-0.5 * np.kron(_Y, _Y))),
    "IsingZZ": Gate(2, 1, diagonal=_rz_diag(2), generator=_g(-0.5 * np.diag(_ZZ))),
    "IsingXY": Gate(2, 1, _isingxy, generator=_g(0.25 * (np.kron(_X, _X) + np.kron(_Y, _Y)))),
    "MultiRZ": Gate(None, 1, diagonal=_rz_diag(None), generator=lambda k: -0.5 * _zparity(k).astype(complex)),
    "CRX": Gate(2, 1, _embed(_rx, 4, [2, 3]), generator=_g(-0.5 * np.kron(_P1, _X))),
    "CRY": Gate(2, 1, _embed(_ry, 4, [2, 3]), generator=_g(-0.5 * np.kron(_P1, _Y))),
    "CRZ": Gate(2, 1, diagonal=_crz_diag, generator=_g([0, 0, -0.5, 0.5])),
    "CRot": Gate(2, 3, _crot),
    "ControlledPhaseShift": Gate(2, 1, diagonal=_phase_diag(4), generator=_g([0, 0, 0, 1])),
    "CPhase": Gate(2, 1, diagonal=_phase_diag(4), generator=_g([0, 0, 0, 1])),
    "PSWAP": Gate(2, 1, _pswap, generator=_g(np.diag([0, 1, 1, 0]))),
    "SingleExcitation": Gate(2, 1, _excitation(4, 1, 2, 0), generator=_g(_excitation_gen(4, 1, 2, 0))),
    "SingleExcitationPlus": Gate(2, 1, _excitation(4, 1, 2, 1), generator=_g(_excitation_gen(4, 1, 2, 1))),
    "SingleExcitationMinus": Gate(2, 1, _excitation(4, 1, 2, -1), generator=_g(_excitation_gen(4, 1, 2, -1))),
    "DoubleExcitation": Gate(4, 1, _excitation(16, 3, 12, 0), generator=_g(_excitation_gen(16, 3, 12, 0))),
    "DoubleExcitationPlus": Gate(4, 1, _excitation(16, 3, 12, 1), generator=_g(_excitation_gen(16, 3, 12, 1))),
    "DoubleExcitationMinus": Gate(4, 1, _excitation(16, 3, 12, -1), generator=_g(_excitation_gen(16, 3, 12, -1))),
    "CSWAP": Gate(3, 0, _const(_ctrl(_SWAP))),
    "Toffoli": Gate(3, 0, _const(_ctrl(_X, 2))),
    "GlobalPhase": Gate(None, 1, diagonal=_gphase_diag, generator=lambda k: -np.ones(2**k, dtype=complex)),
    # a dense unitary given as the single parameter (P, d, d) / a diagonal (P, d)
    "QubitUnitary": Gate(None, 1, lambda p, k: p[0].reshape(-1, 2**k, 2**k)),
    "DiagonalQubitUnitary": Gate(None, 1, diagonal=lambda p, k: p[0].reshape(-1, 2**k)),
}


def _params(params):
    out = []
    for p in params:
        if type(p).__module__.startswith("torch"):  # a tensor (torch is imported where tensors are made)
            p = p.detach().cpu().numpy()
        a = np.asarray(p)
        if not np.iscomplexobj(a):
            a = a.astype(np.float64)
        out.append(a.reshape(-1) if a.ndim <= 1 else a)
    return out


def _torch(a: np.ndarray, dtype, device):
    import torch

    t = torch.from_numpy(np.ascontiguousarray(a))
    return t.to(device=device, dtype=dtype)


def gate_diagonal(name: str, params, k: int, dtype, device, adjoint: bool = False):
    """The ``(P, 2**k)`` diagonal of a diagonal gate (conjugated when ``adjoint``)."""
    d = GATES[name].diagonal(_params(params), k)
    return _torch(d.conj() if adjoint else d, dtype, device)


def gate_matrix(name: str, params, k: int, dtype, device, adjoint: bool = False):
    """The ``(P, 2**k, 2**k)`` matrix of any gate in the table (its adjoint on request)."""
    return _torch(_matrix_np(name, _params(params), k, adjoint), dtype, device)


def gate_matrix_stack(ops, k: int) -> np.ndarray:
    """The ``(K, P, 2**k, 2**k)`` complex128 matrices of the IR operations ``ops`` (gates on ``k``
    wires, each its adjoint on request), row ``i`` what ``gate_matrix`` builds for ``ops[i]``
    broadcast to ``P`` (1, or the broadcast batch), in a fresh array: the gates of one name whose
    parameters are plain floats are evaluated in one batched call (a layer of rotations costs a
    few numpy calls instead of several per gate)."""
    groups: dict = {}
    other = []
    for i, op in enumerate(ops):
        ps = op.params
        # float and numpy's float64 (one parameter, the common case, without a generator)
        if isinstance(ps[0], float) if len(ps) == 1 else all(isinstance(p, float) for p in ps):
            g = groups.get((op.name, op.adjoint))
            if g is None:
                g = groups[(op.name, op.adjoint)] = ([], [])
            g[0].append(i)
            g[1].append(ps)
        else:
            other.append((i, _matrix_np(op.name, _params(ps), k, op.adjoint)))
    d = 2**k
    out = np.empty((len(ops), max([1] + [m.shape[0] for _, m in other]), d, d), dtype=complex)
    for (name, adjoint), (idx, ps) in groups.items():
        cols = [np.array(c, dtype=np.float64) for c in zip(*ps)]  # per parameter, (G,)
        out[idx] = _matrix_np(name, cols, k, adjoint)[:, None]  # (G or 1, d, d) over the batch
    for i, m in other:
        out[i] = m
    return out


def _matrix_np(name: str, ps: list, k: int, adjoint: bool) -> np.ndarray:
    gate = GATES[name]
    if gate.matrix is None:
        d = gate.diagonal(ps, k)
        m = np.zeros(d.shape + (d.shape[-1],), dtype=complex)
        idx = np.arange(d.shape[-1])
        m[:, idx, idx] = d
    else:
        m = gate.matrix(ps, k)
    return np.swapaxes(m, -1, -2).conj() if adjoint else m


def gate_generator(name: str, k: int, adjoint: bool = False) -> Optional[np.ndarray]:
    """Generator ``G`` with ``U = exp(i theta G)``; ``-G`` for the adjoint gate; None if none."""
    gen = GATES[name].generator
    if gen is None:
        return None
    g = np.asarray(gen(k), dtype=complex)
    return -g if adjoint else g


def adjoint_columns(ops) -> tuple[list, int]:
    """``(columns, T)``: each operation's first Jacobian column (None when it has no trainable
    parameter) and the number of trainable parameters, for adjoint differentiation (the engine's
    :mod:`.adjoint` and the small circuits' :mod:`.small`).

    Raises:
        OperationError: a trainable multi-parameter gate, or one without a generator.
    """
    cols, t = [], 0
    for op in ops:
        if len(op.trainable) > 1 or (op.trainable and GATES[op.name].generator is None):
            raise OperationError(
                f"adjoint differentiation needs single-parameter gates with a generator; "
                f"{op.name} on wires {op.wires} has trainable parameters {op.trainable}. "
                f"Decompose it first (e.g. Rot -> RZ RY RZ)")
        cols.append(t if op.trainable else None)
        t += len(op.trainable)
    return cols, t
