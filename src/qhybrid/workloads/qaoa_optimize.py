"""How the QAOA job finds good angles: starts, a batched Adam loop with a convergence test, and
the layer-by-layer schedule.

Pure numpy over an ``energy`` / ``energy_and_grad`` pair that takes a batch ``(B, 2, p)`` of
parameter sets (``qhybrid.qaoa.QAOA`` does; the PennyLane path is wrapped to). No files, no
logging: the job script passes ``on_step`` to log and checkpoint.

- **Starts.** At p = 1 a grid of (gamma, beta) evaluated in one batched call, the best few kept.
  For p > 1 the linear ramp (|gamma| rising, |beta| falling over the layers; the annealing-path
  start of Zhou et al., PRX 10, 021067, 2020) and, when growing from the optimum at p - 1, its
  INTERP extension (the p - 1 angles read as a curve over [0, 1] and resampled at p points).
- **Signs.** The energy is minimised (Max-Cut: ``-cut``) and the mixer is ``+sum X`` (PennyLane's
  ``qml.qaoa`` conventions), so the start ``|+>`` is the mixer's *highest* state; the annealing
  path from it to the cost's lowest state has ``gamma > 0`` and ``beta < 0`` (Zhou et al. maximise
  the cut: their positive angles are these mirrored). The ramp and the p = 1 grid lie there; the
  opposite signs anneal towards the *worst* cut (a 2-iteration run at 28 nodes ended at
  ``cut 2 of 42``).
- **Optimisation.** All starts of a stage step together (one batched energy-and-gradient call
  per iteration); each keeps its own Adam moments. A stage has converged when the best energy
  improved by less than ``tolerance`` over the last ``window`` iterations; ``max_iterations``
  caps it.
- **Schedule.** To convergence: p = 1, 2, ..., p_target, each stage started from INTERP of the
  previous stage's best (and the ramp), the best kept. Fixed ``iterations``: one stage at the
  target depth for exactly that many iterations.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GRID_GAMMAS = 8  # p = 1 grid: gamma in (0, pi/2), beta in (-pi/4, 0) (the annealing side: module's Signs)
GRID_BETAS = 4
#: The ramp's time step: 0.75 is the optimum Sack and Serbyn found for the annealing start (Quantum 5, 491,
#: 2021); here (gnm(n, 1.5 n), n = 12..20, p = 1..3) 0.8 gave the lowest start energies of 0.4..1.0, 0.6 a
#: little higher
RAMP_DELTA = 0.75


@dataclass(frozen=True)
class Schedule:
    """How to optimise (validated by the job script's settings).

    Attributes:
        layers: the target depth p.
        iterations: exactly this many iterations at depth p; None to run to convergence.
        max_iterations: cap per stage when running to convergence.
        tolerance: a stage stops when the best energy improved by less than this over ``window``.
        window: iterations over which the improvement is measured.
        starts: parameter sets optimised together (best kept).
        stepsize: Adam's step size.
        optimizer: ``adam`` or ``sgd``.
        init: ``interp`` (grid at p = 1, ramp / INTERP above) or ``seed`` (the seed's
            ``0.01 * uniform`` start, one set; the timing study).
        seed: seeds the ``seed`` start and the grid's jitter.
    """

    layers: int
    iterations: int | None = None
    max_iterations: int = 300
    tolerance: float = 1e-3
    window: int = 10
    starts: int = 4
    stepsize: float = 0.05
    optimizer: str = "adam"
    init: str = "interp"
    seed: int = 1967


def seed_start(p: int, seed: int) -> np.ndarray:
    """The seed's start ``0.01 * uniform(size=(2, p))`` (Braket's QAOA example), as ``(1, 2, p)``."""
    return (0.01 * np.random.default_rng(seed).uniform(size=(2, p)))[None]


def ramp(p: int, *, delta: float = RAMP_DELTA) -> np.ndarray:
    """The linear ramp ``gamma_i = delta (i + 1/2) / p``, ``beta_i = -delta (1 - (i + 1/2) / p)``, ``(2, p)``:
    a discretised anneal from the mixer to the cost (``beta < 0``: the module's Signs)."""
    s = (np.arange(p) + 0.5) / p
    return np.stack([delta * s, -delta * (1 - s)])


def interp(params: np.ndarray, p: int) -> np.ndarray:
    """INTERP: angles ``(2, q)`` read as a curve over [0, 1], resampled at ``p`` points, ``(2, p)``."""
    q = params.shape[1]
    if q == 1:
        return np.repeat(params, p, axis=1)
    old = np.linspace(0.0, 1.0, q)
    new = np.linspace(0.0, 1.0, p)
    return np.stack([np.interp(new, old, row) for row in params])


def grid(seed: int) -> np.ndarray:
    """The p = 1 grid, ``(GRID_GAMMAS * GRID_BETAS, 2, 1)``, cell centres jittered by the seed."""
    rng = np.random.default_rng(seed)
    g = (np.arange(GRID_GAMMAS) + 0.5 + 0.3 * rng.uniform(-1, 1, GRID_GAMMAS)) * (np.pi / 2) / GRID_GAMMAS
    b = -(np.arange(GRID_BETAS) + 0.5 + 0.3 * rng.uniform(-1, 1, GRID_BETAS)) * (np.pi / 4) / GRID_BETAS
    gg, bb = np.meshgrid(g, b, indexing="ij")
    return np.stack([gg.ravel(), bb.ravel()], axis=1)[:, :, None]


def adam(params, grad, state: dict, stepsize: float, *, beta1=0.9, beta2=0.999, eps=1e-8):
    """One Adam update of a batch (elementwise, so each set has its own moments), as ``qml.AdamOptimizer``."""
    t = state.get("t", 0) + 1
    m = beta1 * np.asarray(state.get("m", np.zeros_like(params))) + (1 - beta1) * grad
    v = beta2 * np.asarray(state.get("v", np.zeros_like(params))) + (1 - beta2) * grad * grad
    lr = stepsize * np.sqrt(1 - beta2**t) / (1 - beta1**t)
    return params - lr * m / (np.sqrt(v) + eps), {"t": t, "m": m, "v": v}


def step(kind: str, params, grad, state: dict, stepsize: float):
    """One optimizer update ``(new_params, new_state)`` for ``adam`` or ``sgd``."""
    if kind == "sgd":
        return params - stepsize * grad, state
    return adam(params, grad, state, stepsize)


def converged(history: list[float], *, window: int, tolerance: float) -> bool:
    """True when the best of ``history`` improved by less than ``tolerance`` over its last ``window`` entries."""
    if len(history) <= window:
        return False
    before = min(history[:-window])
    return before - min(history) < tolerance


def best_of(energy, candidates: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` candidates ``(B, 2, p)`` of lowest energy (one batched call)."""
    e = np.atleast_1d(energy(candidates))
    return candidates[np.argsort(e, kind="stable")[:k]]


def stage_starts(schedule: Schedule, p: int, previous: np.ndarray | None, energy) -> np.ndarray:
    """The parameter sets a stage at depth ``p`` starts from, ``(B, 2, p)``."""
    if schedule.init == "seed":
        return seed_start(p, schedule.seed)
    if p == 1:
        return best_of(energy, grid(schedule.seed), schedule.starts)
    sets = [ramp(p)]
    if previous is not None:
        sets.insert(0, interp(previous, p))
    rng = np.random.default_rng(schedule.seed + p)
    base = sets[0]
    while len(sets) < schedule.starts:  # perturbed copies of the best guess
        sets.append(base * (1 + 0.1 * rng.standard_normal(base.shape)))
    return np.stack(sets[: max(1, schedule.starts)])


def depths(schedule: Schedule) -> list[int]:
    """The depths of the stages: ``1..p`` to convergence (INTERP warm starts), ``[p]`` for fixed iterations."""
    if schedule.iterations is not None or schedule.init == "seed":
        return [schedule.layers]
    return list(range(1, schedule.layers + 1))


def new_state() -> dict:
    """The loop's state before the first iteration (JSON-friendly once ``to_json``-ed)."""
    return {"stage": 0, "params": None, "optimizer": {}, "stage_energies": [], "iteration": 0,
            "energies": [], "layers": [], "iteration_seconds": [], "previous": None, "converged": []}


def optimize(schedule: Schedule, energy, energy_and_grad, *, state: dict | None = None, on_step=None,
             clock=None) -> dict:
    """Run the schedule from ``state`` (a fresh one, or a resumed checkpoint); return the final state.

    Args:
        schedule: what to run.
        energy: ``(B, 2, p) -> (B,)`` energies.
        energy_and_grad: ``(B, 2, p) -> ((B,), (B, 2, p))``.
        state: a state from ``new_state`` or a checkpoint (changed in place).
        on_step: called after every iteration as ``on_step(state)`` (log and checkpoint there).
        clock: ``time.perf_counter`` unless given.

    Returns:
        The state, with ``best_params`` ``(2, p)`` and ``best_energy`` of the final stage added.
    """
    import time

    clock = clock or time.perf_counter
    state = state or new_state()
    plan = depths(schedule)
    while state["stage"] < len(plan):
        p = plan[state["stage"]]
        if state["params"] is None:
            previous = np.asarray(state["previous"]) if state["previous"] is not None else None
            if previous is not None and previous.shape[1] != p - 1:
                previous = None
            state["params"], state["optimizer"], state["stage_energies"] = stage_starts(
                schedule, p, previous, energy), {}, []
        params = np.asarray(state["params"], dtype=np.float64)
        cap = schedule.iterations if schedule.iterations is not None else schedule.max_iterations
        auto = schedule.iterations is None

        def done() -> bool:
            return auto and converged(state["stage_energies"], window=schedule.window, tolerance=schedule.tolerance)

        while len(state["stage_energies"]) < cap and not done():
            t0 = clock()
            e, g = energy_and_grad(params)
            params, state["optimizer"] = step(schedule.optimizer, params, np.asarray(g), state["optimizer"],
                                              schedule.stepsize)
            state["params"] = params
            state["stage_energies"].append(float(np.min(e)))
            state["energies"].append(float(np.min(e)))
            state["layers"].append(p)
            state["iteration_seconds"].append(clock() - t0)
            state["iteration"] += 1
            if on_step is not None:
                on_step(state)
        final = np.atleast_1d(energy(params))
        best = int(np.argmin(final))
        state["previous"] = params[best]
        state["best_energy"] = float(final[best])
        state["converged"].append(done())
        state["stage"] += 1
        state["params"] = None
    state["best_params"] = np.asarray(state["previous"])
    return state


def to_json(state: dict) -> dict:
    """``state`` with arrays as lists (for a plaintext checkpoint)."""
    def plain(v):
        if isinstance(v, np.ndarray):
            return v.tolist()
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        return v

    return {k: plain(v) for k, v in state.items()}


def from_json(saved: dict) -> dict:
    """A checkpoint's state, arrays restored."""
    state = dict(saved)
    for key in ("params", "previous", "best_params"):
        if state.get(key) is not None:
            state[key] = np.asarray(state[key], dtype=np.float64)
    opt = dict(state.get("optimizer") or {})
    state["optimizer"] = {k: (int(v) if k == "t" else np.asarray(v, dtype=np.float64)) for k, v in opt.items()}
    return state
