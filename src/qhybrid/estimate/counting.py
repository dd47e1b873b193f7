"""How many iterations a job's estimate counts: a QAOA run's (known, or expected to convergence,
its starts batched), a QML run's steps; and the note that says how they were counted.

``job`` is the estimate's view of a job (``predict``): ``workload`` and parsed ``settings``.
"""
from __future__ import annotations

import math

from qhybrid.estimate.iterations import MEASURED, qaoa_iterations


def expected_run(job):
    """A QAOA run to convergence's expected length (:mod:`.iterations`); None when the count is given."""
    s = job.settings
    if job.workload != "qaoa" or s.iterations is not None:
        return None
    return qaoa_iterations(layers=s.n_layers, max_iterations=s.max_iterations, window=s.window,
                           tolerance=s.tolerance, stepsize=s.stepsize, init=s.init, n_qubits=s.n_nodes)


def work_units(job, expected=None, count: int | None = None) -> int | None:
    """The run's work in units of one parameter set's iteration at the job's depth p (what the
    engine model prices; ``count``: the run's own iterations, default the expected ones)."""
    s = job.settings
    if job.workload == "qaoa":
        starts = getattr(s, "starts", 1)
        if expected is None:  # exactly N at depth p, the starts batched
            return starts * s.iterations + 1  # + the final energy and the probabilities at the end
        from qhybrid.workloads.qaoa_optimize import GRID_BETAS, GRID_GAMMAS  # start-up: numpy, only here

        return expected.weighted(layers=s.n_layers, starts=starts, grid=GRID_GAMMAS * GRID_BETAS,
                                 count=expected.iterations if count is None else count) + 1
    if job.workload == "qml":
        return s.epochs * qml_epoch(s)[1]
    return None


def counted_iterations(job, expected=None, count: int | None = None) -> int | None:
    """The run's iterations as the job counts them (its progress, ``iteration_number`` and result):
    one optimizer step. For QAOA a step updates every batched start at once (and counts every depth
    of a run to convergence); for QML it is one batch (the epoch has several)."""
    s = job.settings
    if job.workload == "qaoa":
        if expected is None:
            return s.iterations
        return expected.iterations if count is None else count
    if job.workload == "qml":
        return s.epochs * qml_epoch(s)[1]
    return None


def qml_epoch(s) -> tuple[int, int]:
    """``(held-out samples, steps)`` of a QML job's epoch: the training share of ndata (val_fraction held
    out, as ``workloads.qml.split``) in batches of batch_size."""
    held = int(round(s.val_fraction * s.ndata))
    return held, math.ceil(max(1, s.ndata - held) / s.batch_size)


def _stages(expected) -> str:
    """The expected stage lengths in words: ``21 at depth 1, 33 a depth after`` or ``33 a depth``."""
    lengths = expected.lengths()
    if expected.stages > 1 and lengths[0] != lengths[1]:
        return f"{lengths[0]} at depth 1, {lengths[1]} a depth after"
    return f"{lengths[0]} a depth"


def iteration_note(job, expected) -> tuple[str, ...]:
    """What a QAOA job's iteration is, and how its length was found when it runs to convergence."""
    s = job.settings
    if job.workload != "qaoa" or (expected is None and getattr(s, "starts", 1) == 1):
        return ()
    what = (f"an iteration is one optimizer step of all {s.starts} starts together (batched), as the job's "
            f"progress and result count it; s/iter is its average over the run") if s.starts > 1 else ""
    if expected is None:
        return (what,)
    depths = f"depths 1..{s.n_layers}" if expected.stages > 1 else f"depth {s.n_layers}"
    notes = [f"iterations EXPECTED, not known (--iterations not given: the run stops when it converges): "
             f"about {expected.iterations} ({_stages(expected)}, {depths}; 80 % of measured runs took "
             f"{expected.low}-{expected.high}, at most {s.max_iterations} a depth; measured on {MEASURED}); "
             f"total time and cost are expected figures, their 80 % range in the JSON (total_seconds_range, "
             f"cost_usd_range)"]
    if what:
        notes.append(what + " (a depth-1 step costs less than one at the full depth)")
    notes += [f"iteration count less certain: {c}" for c in expected.caveats]
    return tuple(notes)
