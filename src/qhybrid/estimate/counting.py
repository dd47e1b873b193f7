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


def qaoa_ending_units(settings, expected=None) -> float:
    """A QAOA run's evaluations beyond its optimizer steps, in units of one start's iteration at depth p:
    each stage ends with the energy of every start, and the job with the final state for the ranking;
    each a forward pass, about half an energy+gradient (as the grid's energies count). Exactly N
    iterations run one stage at p; a run to convergence one stage a depth, depth d costing d / p (one
    with ``init="seed"``: one stage at p from one start). Measured: a 28-node job with 4 starts ended in
    19.9 s after its last iteration, 2.3 of its 8.6 s iterations of one start (2026-12-02, the 2-core Xeon)."""
    if getattr(settings, "init", "interp") == "seed":  # one set at p, whatever ``starts`` says
        return 1.0
    stages = 1.0 if expected is None else (settings.n_layers + 1) / 2  # sum over d = 1..p of d / p
    return (getattr(settings, "starts", 1) * stages + 1) / 2


def work_units(job, expected=None, count: int | None = None) -> float | None:
    """The run's work in units of one parameter set's iteration at the job's depth p (what the
    engine model prices; ``count``: the run's own iterations, default the expected ones)."""
    s = job.settings
    if job.workload == "qaoa":
        starts = getattr(s, "starts", 1)
        if expected is None:  # exactly N at depth p, the starts batched
            return starts * s.iterations + qaoa_ending_units(s)  # + the final energies and the state at the end
        from qhybrid.workloads.qaoa_optimize import GRID_BETAS, GRID_GAMMAS  # start-up: numpy, only here

        return expected.weighted(layers=s.n_layers, starts=starts, grid=GRID_GAMMAS * GRID_BETAS,
                                 count=expected.iterations if count is None else count) + qaoa_ending_units(s, expected)
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
