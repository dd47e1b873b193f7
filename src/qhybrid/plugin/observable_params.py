"""Derivatives with respect to an observable's parameters (a Hamiltonian's trainable
coefficients), beside the adjoint sweep's columns for the operations' parameters."""
from __future__ import annotations

import numpy as np
import pennylane as qml

from . import engine


def observable_columns(device, tape, circ, n_op: int):
    """(M, T_obs, B) derivatives w.r.t. trainable observable parameters (those past the
    tape's ``n_op`` operation parameters), or None.

    For ``H = sum_t c_t O_t`` (and ``c * O``), ``d<H>/dc_t = <O_t>``; other observable
    parameters (e.g. Hermitian matrix entries) get zero, as PennyLane's adjoint warns.
    """
    obs_tr = [p - n_op for p in tape.trainable_params if p >= n_op]
    if not obs_tr:
        return None
    wire_map = {w: i for i, w in enumerate(device._wire_order(tape))}
    path = device._path(circ.n_wires)
    state = path.final_state(circ)
    B = state.shape[0]
    owner, start = [], 0
    for m, mp in enumerate(tape.measurements):
        nd = len(mp.obs.data) if mp.obs is not None else 0
        owner += [(m, k) for k in range(nd)]
        start += nd
    out = np.zeros((len(tape.measurements), len(obs_tr), B))
    for col, p in enumerate(obs_tr):
        m, k = owner[p]
        obs = tape.measurements[m].obs
        term = None
        if isinstance(obs, qml.ops.LinearCombination) and k < len(obs.coeffs):
            term = obs.ops[k]
        elif isinstance(obs, qml.ops.SProd) and k == 0:
            term = obs.base
        if term is not None:
            o = engine.convert_observable(term, wire_map)
            out[m, col] = path.expval(state, o, circ.n_wires)
    return out
