"""How many iterations a QAOA job run to convergence takes: an expected count with its range, measured.

A run to convergence (``iterations=auto``, the job's default) stops when its energy stops
improving, so its length is known only after it ran. ``benchmarks/estimate.py --iterations-suite``
ran the job's default schedule (depths 1..p: the p = 1 grid, then INTERP warm starts; 4 starts,
Adam 0.05, tolerance 1e-3 over a window of 10) on ``gnm_random_graph(n, 1.5 n, seed)`` for
n = 10, 12, ..., 18, seeds 0..7 and p = 1, 2, 3 (120 runs, ``MEASURED``, 2026-12-02, the starts
on the annealing side: ``workloads.qaoa_optimize``'s Signs):

- the first stage (depth 1, from the grid's best) took ``FIRST_STAGE_MEAN`` = 21 iterations on
  average, each later stage (from INTERP of the one before) ``STAGE_MEAN`` = 33 (depth 2: 35,
  depth 3: 29), with no trend in n (10..18): the model is 21 + 33 (p - 1);
- 80 % of whole runs took between ``RANGE[0]`` and ``RANGE[1]`` times that (p10..p90: 13..30
  iterations at p = 1, 46..72 at p = 2, 70..102 at p = 3; p = 1 is the widest); the longest took
  1.6x, none more than ``max_iterations`` a stage. (Before the starts' signs were mended every
  stage took about 35: the grid and the ramp started on the far side of a random cut.)

Other tolerances, windows or step sizes, and sizes past 18 qubits, were not measured: the
count is then less certain, and the estimate says so. Pure standard library (no torch, no numba).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

FIRST_STAGE_MEAN = 21
STAGE_MEAN = 33
RANGE = (0.6, 1.4)
MEASURED = "gnm(n, 1.5n), n = 10..18, seeds 0..7, p = 1..3: 120 runs of the default schedule"
DEFAULTS = {"tolerance": 1e-3, "window": 10, "stepsize": 0.05}


@dataclass(frozen=True)
class Expected:
    """The expected length of a run to convergence (optimizer iterations, what the job logs).

    Attributes:
        iterations: the expected count over the whole run (every stage).
        low, high: 80 % of measured runs fell between these.
        per_stage: the expected iterations of one stage after the first (of every stage with ``init seed``).
        stages: how many stages (depths) the run goes through.
        first_stage: the expected iterations of the first stage.
        caveats: why this count is less certain than the measurement (non-default settings).
    """

    iterations: int
    low: int
    high: int
    per_stage: int
    stages: int
    caveats: tuple[str, ...] = ()
    first_stage: int | None = None  # None: per_stage

    def lengths(self) -> list[int]:
        """The expected iterations of each stage, the first first."""
        first = self.per_stage if self.first_stage is None else self.first_stage
        return [first] + [self.per_stage] * (self.stages - 1)

    def weighted(self, *, layers: int, starts: int, grid: int, count: int) -> int:
        """``count`` iterations as iterations of one start at the target depth (what they cost).

        The count is shared among the stages as the expected lengths are; a stage at depth d costs
        about d / p of one at depth p, the starts are batched, and depth 1 opens with a grid of
        ``grid`` energies (an energy is about half an energy+gradient).
        """
        lengths = self.lengths()
        depths = range(layers - self.stages + 1, layers + 1)
        opening = grid / (2 * layers) if self.stages == layers else 0.0  # the p = 1 grid (interp init only)
        cost = sum(n * d for n, d in zip(lengths, depths)) * count / sum(lengths)
        return math.ceil(starts * cost / layers + opening)


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
        (54, 32, 76)
    """
    stages = 1 if init == "seed" else max(1, layers)
    per = min(STAGE_MEAN, max_iterations)
    first = per if init == "seed" else min(FIRST_STAGE_MEAN, max_iterations)
    total = first + per * (stages - 1)
    floor = min(window + 1, max_iterations)  # a stage converges only after more than `window` iterations
    low = max(floor * stages, math.floor(RANGE[0] * total))
    high = min(max_iterations * stages, math.ceil(RANGE[1] * total))
    caveats = []
    given = {"tolerance": tolerance, "window": window, "stepsize": stepsize}
    changed = [f"{k} {v:g}" for k, v in given.items() if not math.isclose(v, DEFAULTS[k])]
    if changed:
        caveats.append(f"measured at the default tolerance, window and step size; yours differ ({', '.join(changed)})")
    if init == "seed":
        caveats.append("measured with the default start (init interp); init seed runs one stage from the seed's start")
    if n_qubits is not None and n_qubits > 18:
        caveats.append(f"measured up to 18 qubits (no trend in n there); {n_qubits} is past them")
    return Expected(iterations=total, low=low, high=high, per_stage=per, stages=stages, caveats=tuple(caveats),
                    first_stage=first)
