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


def counted_iterations(job, expected=None, count: int | None = None) -> int | None:
    """Iterations of one parameter set at the job's depth p that cost what the whole run costs
    (``count``: the run's own iterations, default the expected ones)."""
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


def qml_epoch(s) -> tuple[int, int]:
    """``(held-out samples, steps)`` of a QML job's epoch: the training share of ndata (val_fraction held
    out, as ``workloads.qml.split``) in batches of batch_size."""
    held = int(round(s.val_fraction * s.ndata))
    return held, math.ceil(max(1, s.ndata - held) / s.batch_size)


def iteration_note(job, iterations: int | None, expected) -> tuple[str, ...]:
    """How a QAOA job's iterations were counted, when that is not simply ``iterations``."""
    s = job.settings
    if job.workload != "qaoa" or (expected is None and getattr(s, "starts", 1) == 1):
        return ()
    if expected is None:
        return (f"{s.iterations} iterations with {s.starts} starts batched, counted as {iterations} iterations of "
                f"one start at p = {s.n_layers}",)
    depths = f"depths 1..{s.n_layers}" if expected.stages > 1 else f"depth {s.n_layers}"
    notes = [f"iterations EXPECTED, not known (--iterations not given: the run stops when it converges): "
             f"about {expected.iterations} ({expected.per_stage} a depth, {depths}; 80 % of measured runs took "
             f"{expected.low}-{expected.high}, at most {s.max_iterations} a depth; measured on {MEASURED}); "
             f"{s.starts} start(s) batched, counted as {iterations} iterations of one start at p = {s.n_layers}; "
             f"total time and cost are expected figures, their 80 % range in the JSON (total_seconds_range, "
             f"cost_usd_range)"]
    notes += [f"iteration count less certain: {c}" for c in expected.caveats]
    return tuple(notes)
