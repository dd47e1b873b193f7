"""How many iterations a QAOA job run to convergence takes: an expected count with its range, measured.

A run to convergence (``iterations=auto``, the job's default) stops when its energy stops
improving, so its length is known only after it ran. ``benchmarks/estimate.py --iterations-suite``
ran the job's default schedule (depths 1..p with INTERP warm starts, 4 starts, Adam 0.05,
tolerance 1e-3 over a window of 10) on ``gnm_random_graph(n, 1.5 n, seed)`` for n = 10, 12, ...,
18, seeds 0..7 and p = 1, 2, 3 (120 runs, ``MEASURED``):

- a stage (one depth) took 35 iterations on average (medians 31..38), with no trend in n
  (10..18) nor in the depth: the model is ``STAGE_MEAN`` iterations a stage;
- 80 % of whole runs took between ``RANGE[0]`` and ``RANGE[1]`` times that (p10..p90: 23..43
  iterations at p = 1, 52..87 at p = 2, 81..127 at p = 3); the longest took 2.7x (a stage
  that wandered 120 iterations before settling), none more than ``max_iterations`` a stage.

Other tolerances, windows or step sizes, and sizes past 18 qubits, were not measured: the
count is then less certain, and the estimate says so. Pure standard library (no torch, no numba).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

STAGE_MEAN = 35
RANGE = (0.7, 1.25)
MEASURED = "gnm(n, 1.5n), n = 10..18, seeds 0..7, p = 1..3: 120 runs of the default schedule"
DEFAULTS = {"tolerance": 1e-3, "window": 10, "stepsize": 0.05}


@dataclass(frozen=True)
class Expected:
    """The expected length of a run to convergence (optimizer iterations, what the job logs).

    Attributes:
        iterations: the expected count over the whole run (every stage).
        low, high: 80 % of measured runs fell between these.
        per_stage: the expected iterations of one stage.
        stages: how many stages (depths) the run goes through.
        caveats: why this count is less certain than the measurement (non-default settings).
    """

    iterations: int
    low: int
    high: int
    per_stage: int
    stages: int
    caveats: tuple[str, ...] = ()

    def weighted(self, *, layers: int, starts: int, grid: int, count: int) -> int:
        """``count`` iterations as iterations of one start at the target depth (what they cost).

        A stage at depth d costs about d / p of one at depth p, the starts are batched, and depth
        1 opens with a grid of ``grid`` energies (an energy is about half an energy+gradient).
        """
        per = count / self.stages
        depths = range(layers - self.stages + 1, layers + 1)
        opening = grid / (2 * layers) if self.stages == layers else 0.0  # the p = 1 grid (interp init only)
        return math.ceil(starts * per * sum(depths) / layers + opening)


def qaoa_iterations(*, layers: int, max_iterations: int, window: int, tolerance: float, stepsize: float,
                    init: str = "interp", n_qubits: int | None = None) -> Expected:
    """The expected iterations of a QAOA run to convergence (see the module's measurement).

    Args:
        layers: the target depth p (the run goes through depths 1..p; ``init="seed"`` only p).
        max_iterations: the cap of a stage.
        window, tolerance, stepsize: the convergence test and Adam's step (defaults measured).
        init: ``interp`` (grid and warm starts, one stage a depth) or ``seed`` (one stage at p).
        n_qubits: the problem's size (only to say when it lies past the measured sizes).

    Example:
        >>> e = qaoa_iterations(layers=2, max_iterations=300, window=10, tolerance=1e-3, stepsize=0.05)
        >>> (e.iterations, e.low, e.high)
        (70, 48, 88)
    """
    stages = 1 if init == "seed" else max(1, layers)
    per = min(STAGE_MEAN, max_iterations)
    floor = min(window + 1, max_iterations)  # a stage converges only after more than `window` iterations
    low = max(floor, math.floor(RANGE[0] * per)) * stages
    high = min(max_iterations, math.ceil(RANGE[1] * per)) * stages
    caveats = []
    given = {"tolerance": tolerance, "window": window, "stepsize": stepsize}
    changed = [f"{k} {v:g}" for k, v in given.items() if not math.isclose(v, DEFAULTS[k])]
    if changed:
        caveats.append(f"measured at the default tolerance, window and step size; yours differ ({', '.join(changed)})")
    if init == "seed":
        caveats.append("measured with the default start (init interp); init seed runs one stage from the seed's start")
    if n_qubits is not None and n_qubits > 18:
        caveats.append(f"measured up to 18 qubits (no trend in n there); {n_qubits} is past them")
    return Expected(iterations=per * stages, low=low, high=high, per_stage=per, stages=stages,
                    caveats=tuple(caveats))
