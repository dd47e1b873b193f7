"""Job script: QAOA Max-Cut (or Max-Clique) on a graph, optimised until it has an answer.

Hyperparameters (strings, defaults in ``DEFAULTS``): ``n_nodes``, ``n_edges``, ``n_layers`` (p),
``seed``, ``iterations`` (``auto``: to convergence; a number N: exactly N iterations at depth p),
``max_iterations`` (cap per stage), ``tolerance`` and ``window`` (a stage has converged when the
best energy improved by less than ``tolerance`` over ``window`` iterations), ``starts`` (parameter
sets optimised together, best kept), ``init`` (``interp``: p = 1 grid, linear ramp and INTERP
warm starts layer by layer; ``seed``: the seed's ``0.01 * uniform`` start), ``stepsize``,
``optimizer`` (``adam`` | ``sgd``), ``diff_method`` (PennyLane devices only; the fast path is
always adjoint), ``problem`` (``maxcut`` | ``maxclique``), ``dtype`` (``complex128`` | ``complex64``).
``PRESETS["seed-timing"]`` is the seed's timing study: 5 Adam steps of 0.1 from its start.
How the angles are found: ``qaoa_optimize``.

The graph comes from the input channel ``input-graph`` (a node-link JSON file or an edge list
``i j [weight]`` per line) when given, else ``networkx.gnm_random_graph(n_nodes, n_edges, seed)``
(the same graph from ``qaoa.problem.random_graph``: the fast path never imports networkx).

Device (``AMZN_BRAKET_DEVICE_ARN``): ``local:qhybrid/qhybrid.cpu|gpu`` runs
:class:`qhybrid.qaoa.QAOA`; ``local:pennylane/<name>`` the same circuit as a PennyLane QNode
(``qml.qaoa`` cost and mixer layers, ``expval(cost_h)``). Both use the same optimizer code, so
their energy trajectories agree to rounding.

Each iteration logs ``energy`` (the best energy of the batch at the parameters before the step),
``layers`` (the stage's depth) and ``iteration_seconds``; a checkpoint is written after the first
iteration, then at most every ``CHECKPOINT_EVERY_S`` seconds, and after the last; a job started
with an earlier job's checkpoints (or a standalone run finding ``./qhybrid-local``) resumes where
it stopped and says so. The result reports the answer in words (``summary``: ``cut 21 of 24 edges
— optimum 21 (found)``). Runs standalone too: ``python -m qhybrid.workloads.qaoa``.
"""
from __future__ import annotations

import math
import os
import sys
import time

# Idle OpenMP threads sleep instead of spinning. numba's and torch's parallel regions are short
# and many; on shared or hyper-threaded cores a spinning waiter steals the cycles of the thread
# still working (measured here: 7x slower at 18 qubits with 2 threads). Set before torch/numba load.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
from dataclasses import dataclass

from qhybrid.devices import Target, require_cuda, resolve
from qhybrid.jobs.script import say_started
from qhybrid.errors import SpecError
from qhybrid.workloads.qaoa_graph import load_graph, networkx_graph, read_graph  # noqa: F401  (read_graph: pre-flight's)

# numpy and the optimizer load where they are used: the CLI reads the settings below without them

CHECKPOINT_SUFFIX = "qaoa"
CHECKPOINT_EVERY_S = 1.0  # a checkpoint after an iteration at most this often (and after the last)
# To the job runner (qhybrid.jobs.entry): every file this script writes is closed when it returns
# (results and checkpoints are written atomically), so its process may end without Python's
# teardown of numba's and LLVM's objects, 0.3-0.8 s of a small job's wall time.
QHYBRID_EXIT_WITHOUT_TEARDOWN = True
PROBLEMS = ("maxcut", "maxclique")
OPTIMIZERS = ("adam", "sgd")
INITS = ("interp", "seed")
DIFF_METHODS = ("adjoint", "best", "parameter-shift", "backprop", "finite-diff")
DTYPES = ("complex128", "complex64")
TOP_K = 64  # the most likely bitstrings among which the best is reported
DEFAULTS = {"n_nodes": "18", "n_edges": "24", "n_layers": "2", "seed": "1967", "iterations": "auto",
            "max_iterations": "300", "tolerance": "0.001", "window": "10", "starts": "4",
            "init": "interp", "stepsize": "0.05", "diff_method": "adjoint", "problem": "maxcut",
            "optimizer": "adam", "dtype": "complex128"}
PRESETS = {"seed-timing": {"iterations": "5", "init": "seed", "starts": "1", "stepsize": "0.1"}}


@dataclass(frozen=True)
class Settings:
    """Validated hyperparameters."""

    n_nodes: int = 18
    n_edges: int = 24
    n_layers: int = 2
    seed: int = 1967
    iterations: int | None = None
    max_iterations: int = 300
    tolerance: float = 1e-3
    window: int = 10
    starts: int = 4
    init: str = "interp"
    stepsize: float = 0.05
    diff_method: str = "adjoint"
    problem: str = "maxcut"
    optimizer: str = "adam"
    dtype: str = "complex128"

    def schedule(self):
        """The optimisation these settings ask for (a ``qaoa_optimize.Schedule``)."""
        from qhybrid.workloads import qaoa_optimize as opt

        return opt.Schedule(layers=self.n_layers, iterations=self.iterations, max_iterations=self.max_iterations,
                            tolerance=self.tolerance, window=self.window, starts=self.starts,
                            stepsize=self.stepsize, optimizer=self.optimizer, init=self.init, seed=self.seed)


def _number(hp: dict, key: str, kind, low, high=None):
    text = str(hp.get(key, DEFAULTS[key])).strip()
    try:
        value = kind(text)
    except ValueError:
        raise SpecError(f"hyperparameter {key}={text!r} is not {'an integer' if kind is int else 'a number'}")
    if not math.isfinite(value) or value < low or (high is not None and value > high):
        span = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise SpecError(f"hyperparameter {key}={text!r} out of range: must be {span}")
    return value


def _choice(hp: dict, key: str, valid) -> str:
    value = str(hp.get(key, DEFAULTS[key])).strip().lower()
    if value not in valid:
        raise SpecError(f"hyperparameter {key}={value!r}: valid are {', '.join(valid)}")
    return value


def parse_settings(hp: dict) -> Settings:
    """Validate the string hyperparameters (defaults in ``DEFAULTS``; ``sagemaker_*`` keys ignored).

    Raises:
        SpecError: naming the bad value and what is valid.
    """
    unknown = sorted(k for k in set(hp) - set(DEFAULTS) if not k.startswith("sagemaker_"))
    if unknown:
        raise SpecError(f"unknown hyperparameter {unknown[0]!r}; valid: {', '.join(DEFAULTS)}")
    n = _number(hp, "n_nodes", int, 1, 34)
    m = _number(hp, "n_edges", int, 0, n * (n - 1) // 2)
    auto = str(hp.get("iterations", DEFAULTS["iterations"])).strip().lower() == "auto"
    return Settings(
        n_nodes=n, n_edges=m, n_layers=_number(hp, "n_layers", int, 1, 1000),
        seed=_number(hp, "seed", int, 0, 2**32 - 1),
        iterations=None if auto else _number(hp, "iterations", int, 1, 10**7),
        max_iterations=_number(hp, "max_iterations", int, 1, 10**7),
        tolerance=_number(hp, "tolerance", float, 0.0), window=_number(hp, "window", int, 1, 10**6),
        starts=_number(hp, "starts", int, 1, 1024), init=_choice(hp, "init", INITS),
        stepsize=_number(hp, "stepsize", float, 0.0), diff_method=_choice(hp, "diff_method", DIFF_METHODS),
        problem=_choice(hp, "problem", PROBLEMS), optimizer=_choice(hp, "optimizer", OPTIMIZERS),
        dtype=_choice(hp, "dtype", DTYPES),
    )


# -- the two simulators (both take a batch (B, 2, p) of parameter sets) ----------------------
class _Fast:
    """qhybrid's fast QAOA path."""

    def __init__(self, graph, settings: Settings, target: Target):
        from qhybrid.qaoa import QAOA

        if target.needs_gpu:
            require_cuda(f"device {target}", "local:qhybrid/qhybrid.cpu")
        self.q = QAOA(graph, problem=settings.problem, dtype=settings.dtype, device=target.torch_device,
                      backend=target.kernel_set())
        self.diagonal = self.q.diagonal

    def energy_and_grad(self, params):
        return self.q.energy_and_grad(params)

    def energy(self, params):
        return self.q.energy(params)

    def top(self, params, k):
        return [(r["bitstring"], r["probability"]) for r in self.q.most_likely(params, k)]


class _PennyLane:
    """The same circuit as a QNode on a PennyLane device (one parameter set per call)."""

    def __init__(self, graph, settings: Settings, target: Target):
        import pennylane as qml

        from qhybrid.qaoa.pennylane import ansatz, hamiltonians
        from qhybrid.qaoa.problem import cost_diagonal

        graph = networkx_graph(graph)
        n = graph.number_of_nodes()
        self.cost_h, mixer_h = hamiltonians(graph, settings.problem)
        dev = qml.device(target.name, wires=n)

        def circuit(params):
            ansatz(params, self.cost_h, mixer_h, n)

        def energy(params):
            circuit(params)
            return qml.expval(self.cost_h)

        def probs(params):
            circuit(params)
            return qml.probs(wires=range(n))

        self.n = n
        self.energy_qnode = qml.QNode(energy, dev, diff_method=settings.diff_method)
        self.probs_qnode = qml.QNode(probs, dev, diff_method=None)
        self.qml = qml
        self.diagonal = cost_diagonal(graph, settings.problem)

    def _one_energy_and_grad(self, params):
        import numpy as np
        from pennylane import numpy as pnp

        grad_fn = self.qml.grad(self.energy_qnode)
        g = grad_fn(pnp.array(params, requires_grad=True))
        return float(grad_fn.forward), np.asarray(g, dtype=np.float64)

    def energy_and_grad(self, params):
        import numpy as np

        params = np.asarray(params)
        if params.ndim == 2:
            return self._one_energy_and_grad(params)
        out = [self._one_energy_and_grad(a) for a in params]
        return np.array([o[0] for o in out]), np.stack([o[1] for o in out])

    def energy(self, params):
        import numpy as np

        params = np.asarray(params)
        if params.ndim == 2:
            return float(self.energy_qnode(params))
        return np.array([float(self.energy_qnode(a)) for a in params])

    def top(self, params, k):
        import numpy as np

        p = np.asarray(self.probs_qnode(np.asarray(params)))
        order = np.argsort(-p, kind="stable")[:k]
        return [(format(int(z), f"0{self.n}b"), float(p[z])) for z in order]


def make_simulator(graph, settings: Settings, target: Target | str):
    """The fast path for ``local:qhybrid/*``, a QNode for ``local:pennylane/*``.

    Args:
        target: the resolved device (a device string is resolved here, once).

    Raises:
        DeviceError: a bad device string, or qhybrid.gpu without CUDA.
    """
    target = resolve(target)
    if target.provider == "qhybrid":
        return _Fast(graph, settings, target)
    return _PennyLane(graph, settings, target)


# -- the job ------------------------------------------------------------------------------
def _set_threads(*, torch_too: bool) -> None:
    """The job's thread count (``QHYBRID_TORCH_THREADS``) for numba, and for torch when it runs
    (the numba fast path never imports torch). On the numba path numba's library loads without
    its scipy probe first (``numba_load``)."""
    if not torch_too:
        from qhybrid.workloads import numba_load

        try:
            numba_load.skip_blas_probe()
        except ImportError:  # pragma: no cover - no numba: the torch kernels run
            pass
    threads = os.environ.get("QHYBRID_TORCH_THREADS")
    if not threads:
        return
    if torch_too:
        import torch

        torch.set_num_threads(max(1, int(threads)))
    try:
        import numba

        numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))
    except ImportError:  # pragma: no cover
        pass


def _resume(settings: Settings) -> dict | None:
    """The loop state of a checkpoint to resume from, saying so in one line; None when there is none.

    Raises:
        SpecError: a checkpoint of another depth, or of the seed's older format.
    """
    import qhybrid.jobs as jobs
    from qhybrid.workloads import qaoa_optimize as opt

    saved = jobs.latest_checkpoint(CHECKPOINT_SUFFIX)
    if not saved:
        return None
    if "stage" not in saved:
        raise SpecError(f"the checkpoint in {jobs.checkpoint_dir()} is from an older qhybrid (no 'stage'); "
                        "delete it to start over")
    state = opt.from_json(saved)
    plan = opt.depths(settings.schedule())
    layers = state["layers"][-1] if state["layers"] else None
    if layers is not None and layers not in plan:
        raise SpecError(f"the checkpoint in {jobs.checkpoint_dir()} is at depth {layers}, but n_layers="
                        f"{settings.n_layers}; delete it to start over")
    where = "" if os.environ.get("AMZN_BRAKET_CHECKPOINT_DIR") else " (standalone run; delete the folder to start over)"
    print(f"qhybrid: resuming QAOA from the checkpoint in {jobs.checkpoint_dir()} after iteration "
          f"{state['iteration']}{where}", file=sys.stderr, flush=True)
    return state


class _Checkpoints:
    """The loop state saved after an iteration at most every ``every`` seconds (the first at once),
    and the last one on ``flush``: a checkpoint is a file written and synced (milliseconds), while
    an iteration of a small instance takes well under one. A job stopped mid-run resumes from at
    most ``every`` seconds back."""

    def __init__(self, every: float = CHECKPOINT_EVERY_S):
        self.every, self.saved_at, self.pending = every, None, None

    def offer(self, state: dict) -> None:
        now = time.monotonic()
        if self.saved_at is None or now - self.saved_at >= self.every:
            self._save(state)
            self.saved_at = now
        else:
            self.pending = state

    def flush(self) -> None:
        if self.pending is not None:
            self._save(self.pending)

    def _save(self, state: dict) -> None:
        import qhybrid.jobs as jobs

        jobs.save_job_checkpoint(state, checkpoint_file_suffix=CHECKPOINT_SUFFIX)
        self.pending = None


def run(settings: Settings, *, device_string: str, graph=None) -> dict:
    """Optimise, logging metrics and checkpoints through ``qhybrid.jobs``; returns the result dict.

    Result keys: ``summary`` (the answer in words), ``energy`` (at the final parameters), ``params``,
    ``best_bitstring`` (the best among the ``TOP_K`` most likely bitstrings) with ``best_value``
    (its energy), ``best_cut`` (Max-Cut) or ``best_clique`` (Max-Clique, None when not a clique),
    ``optimum`` and ``optimal_bitstrings`` (exact, from the cost diagonal), ``found``,
    ``approximation_ratio`` (the expectation's) and ``best_approximation_ratio`` (the best
    bitstring's), ``iterations``, ``converged`` (per stage), ``energies`` and ``layers`` (per
    iteration), ``iteration_seconds``, ``device``, ``n_qubits``, ``n_edges``, ``problem``, ``n_layers``.
    """
    from qhybrid.workloads import numba_load

    target = resolve(device_string)  # the one place this job's device string is read
    numba = target.kernels == "numba"
    if numba:  # first thing: the child's compilation overlaps everything here up to the kernels'
        numba_load.compile_ahead(settings.dtype)
    try:
        return _run(settings, target=target, graph=graph, numba=numba)
    finally:
        numba_load.end_children()


def _run(settings: Settings, *, target: Target, graph, numba: bool) -> dict:
    import qhybrid.jobs as jobs
    from qhybrid.workloads import qaoa_optimize as opt
    from qhybrid.workloads import qaoa_report as report

    from qhybrid.qaoa.problem import as_graph

    _set_threads(torch_too=not numba)
    graph = load_graph(settings, jobs.input_dir("input-graph")) if graph is None else as_graph(graph)
    # the progress's phases until the first iteration's metrics (a 30-node job: ~50 s, then ~160 s)
    say_started(f"preparing the {graph.n_nodes}-node problem (cost diagonal, state buffers)")
    sim = make_simulator(graph, settings, target)
    say_started("running the first iteration (metrics at its end)")

    checkpoints = _Checkpoints()

    def on_step(state: dict) -> None:
        stamp, it = time.time(), state["iteration"] - 1  # one timestamp: the metrics land in one row
        jobs.log_metric("energy", state["energies"][-1], timestamp=stamp, iteration_number=it)
        jobs.log_metric("layers", state["layers"][-1], timestamp=stamp, iteration_number=it)
        jobs.log_metric("iteration_seconds", state["iteration_seconds"][-1], timestamp=stamp, iteration_number=it)
        checkpoints.offer(opt.to_json(state))

    state = opt.optimize(settings.schedule(), sim.energy, sim.energy_and_grad, state=_resume(settings),
                         on_step=on_step)
    checkpoints.flush()
    params = state["best_params"]
    final = float(sim.energy(params))
    answer = report.answer(graph, settings.problem, sim.diagonal, final, sim.top(params, TOP_K))
    return {
        **answer, "params": params.tolist(), "iterations": state["iteration"], "converged": state["converged"],
        "energies": state["energies"], "layers": state["layers"], "iteration_seconds": state["iteration_seconds"],
        "device": str(target), "n_qubits": graph.n_nodes, "n_edges": graph.n_edges,
        "problem": settings.problem, "n_layers": settings.n_layers,
    }


def main() -> dict:
    """Entry point under the job runtime (or standalone)."""
    import qhybrid.jobs as jobs

    settings = parse_settings(jobs.hyperparameters())
    result = run(settings, device_string=jobs.device())
    jobs.save_job_result(result)
    if not os.environ.get("AMZN_BRAKET_JOB_RESULTS_DIR"):
        print(result["summary"], flush=True)
    return result


if __name__ == "__main__":
    main()
