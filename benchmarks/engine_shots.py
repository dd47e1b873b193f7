"""``engine.py --shots``: finite-shot measurements on qhybrid against the peer, side by side.

For each wire count and shot count, one forward call (parameters not trainable) of the layered
circuit (:func:`engine.layered_workload`) ending in ``qml.sample()``, ``qml.counts()`` or two
expectation values (``Z0 Z1`` and ``X`` on the last wire, one of them needing a basis change),
ours and the peer's taking turns (:func:`engine.interleaved_medians`); ratio = peer / ours.
The two samplers draw different bitstrings from their seeds, so the expectation values are
compared within shot noise (five standard errors), samples by shape and dtype, counts by total,
key length, order and the types of keys and counts.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import pennylane as qml

SHOT_WIRES = (4, 8, 12, 16, 20)
SHOT_COUNTS = (10, 1000, 100_000)
KINDS = ("sample", "counts", "expval")


def _measure(kind: str, n: int):
    if kind == "sample":
        return qml.sample()
    if kind == "counts":
        return qml.counts()
    return qml.expval(qml.Z(0) @ qml.Z(1)), qml.expval(qml.X(n - 1))


def shots_table(args, c_dtype, *, layered_workload, make_device, interleaved_medians, stat) -> None:
    """Print the table (markdown) for ``args.shots_wires`` x ``SHOT_COUNTS`` x ``KINDS``."""
    wires = [int(w) for w in args.shots_wires.split(",")]
    print(f"- load average before: {os.getloadavg()[0]:.2f} (two shared cores)\n")
    print("| n | shots | measurement | ours ms | peer ms | ratio | check |")
    print("|---|---|---|---|---|---|---|")
    for n in wires:
        circuit, x0 = layered_workload(n)
        x = np.asarray(x0)
        for shots in SHOT_COUNTS:
            for kind in KINDS:
                calls, outs = [], []
                for name in (args.device, args.peer):
                    qnode = qml.set_shots(qml.QNode(_with_measurement(circuit, kind, n),
                                                    make_device(name, n, c_dtype)), shots)
                    calls.append(lambda q=qnode: q(x))
                    outs.append(qnode(x))
                ours, peer = interleaved_medians(calls, [args.repeats] * 2, stat=stat)
                print(f"| {n} | {shots} | {kind} | {ours * 1e3:.2f} | {peer * 1e3:.2f} | {peer / ours:.2f}x | "
                      f"{_check(kind, outs, shots, n)} |")
                sys.stdout.flush()
    print(f"\n- load average after: {os.getloadavg()[0]:.2f}")


def _with_measurement(circuit, kind: str, n: int):
    """The layered circuit's gates (its own measurement dropped) followed by ``kind``'s."""
    def qfunc(x):
        with qml.QueuingManager.stop_recording():
            tape = qml.tape.make_qscript(circuit)(x)
        for op in tape.operations:
            qml.apply(op)
        return _measure(kind, n)

    return qfunc


def _check(kind: str, outs, shots: int, n: int) -> str:
    ours, peer = outs
    if kind == "sample":
        ok = np.shape(ours) == np.shape(peer) == (shots, n) and ours.dtype == peer.dtype
        return "ok" if ok else f"shapes/dtypes {np.shape(ours)} {ours.dtype} {np.shape(peer)} {peer.dtype}"
    if kind == "counts":
        ok = (sum(ours.values()) == sum(peer.values()) == shots and all(len(k) == n for k in ours)
              and list(ours) == sorted(ours) and {type(k) for k in ours} == {type(k) for k in peer}
              and {type(v) for v in ours.values()} == {type(v) for v in peer.values()})
        return "ok" if ok else "counts differ in form"
    worst = 0.0
    for a, b in zip(ours, peer):
        se = np.sqrt(max(1 - float(a) ** 2, 1 - float(b) ** 2, 1e-4) * 2 / shots)
        worst = max(worst, abs(float(a) - float(b)) / se)
    return "ok" if worst < 5 else f"{worst:.1f} standard errors apart"
