"""Job script: QAOA Max-Cut (or Max-Clique) on a graph, optimised with Adam.

Hyperparameters (strings): ``n_nodes``, ``n_edges``, ``n_layers``, ``seed``,
``iterations``, ``stepsize``, ``diff_method`` (PennyLane devices only; the fast
path is always adjoint), ``problem`` (``maxcut`` | ``maxclique``),
``optimizer`` (``adam`` | ``sgd``), ``dtype`` (``complex128`` | ``complex64``).
The graph comes from the input channel ``input-graph`` (a node-link JSON file
or an edge list ``i j [weight]`` per line) when given, else
``networkx.gnm_random_graph(n_nodes, n_edges, seed=seed)``.

Device (``AMZN_BRAKET_DEVICE_ARN``): ``local:qhybrid/qhybrid.cpu|gpu`` runs
:class:`qhybrid.qaoa.QAOA`; ``local:pennylane/<name>`` the same circuit as a
PennyLane QNode (``qml.qaoa`` cost and mixer layers, ``expval(cost_h)``). Both
start from the same seeded parameters and use the same optimizer code, so
their cost trajectories agree to rounding.

Each iteration logs ``Cost`` (the energy at the parameters before the step)
and ``iteration_seconds``, and writes a checkpoint; a job started with an
earlier job's checkpoints resumes where it stopped. Runs standalone too:
``python -m qhybrid.workloads.qaoa``.
"""
from __future__ import annotations

import os
import time

# Idle OpenMP threads sleep instead of spinning. numba's and torch's parallel regions are short
# and many; on shared or hyper-threaded cores a spinning waiter steals the cycles of the thread
# still working (measured here: 7x slower at 18 qubits with 2 threads). Set before torch/numba load.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from qhybrid.errors import DeviceError, SpecError

CHECKPOINT_SUFFIX = "qaoa"
PROBLEMS = ("maxcut", "maxclique")
OPTIMIZERS = ("adam", "sgd")
DIFF_METHODS = ("adjoint", "best", "parameter-shift", "backprop", "finite-diff")
DTYPES = ("complex128", "complex64")
DEFAULTS = {"n_nodes": "18", "n_edges": "24", "n_layers": "2", "seed": "1967", "iterations": "5",
            "stepsize": "0.1", "diff_method": "adjoint", "problem": "maxcut", "optimizer": "adam",
            "dtype": "complex128"}


@dataclass(frozen=True)
class Settings:
    """Validated hyperparameters."""

    n_nodes: int = 18
    n_edges: int = 24
    n_layers: int = 2
    seed: int = 1967
    iterations: int = 5
    stepsize: float = 0.1
    diff_method: str = "adjoint"
    problem: str = "maxcut"
    optimizer: str = "adam"
    dtype: str = "complex128"


def _number(hp: dict, key: str, kind, low, high=None):
    text = str(hp.get(key, DEFAULTS[key])).strip()
    try:
        value = kind(text)
    except ValueError:
        raise SpecError(f"hyperparameter {key}={text!r} is not {'an integer' if kind is int else 'a number'}")
    if not np.isfinite(value) or value < low or (high is not None and value > high):
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
    return Settings(
        n_nodes=n, n_edges=m, n_layers=_number(hp, "n_layers", int, 1, 1000),
        seed=_number(hp, "seed", int, 0, 2**32 - 1), iterations=_number(hp, "iterations", int, 0, 10**7),
        stepsize=_number(hp, "stepsize", float, 0.0), diff_method=_choice(hp, "diff_method", DIFF_METHODS),
        problem=_choice(hp, "problem", PROBLEMS), optimizer=_choice(hp, "optimizer", OPTIMIZERS),
        dtype=_choice(hp, "dtype", DTYPES),
    )


# -- the graph ------------------------------------------------------------------------
def read_graph(path: Path):
    """A networkx graph from a node-link JSON file or an edge list (``i j [weight]`` per line).

    Raises:
        SpecError: unreadable file, naming it and the accepted formats.
    """
    import json

    import networkx as nx

    try:
        if path.suffix.lower() == ".json":
            data = json.loads(path.read_text())
            key = "links" if "links" in data else "edges"
            try:
                g = nx.node_link_graph(data, edges=key)
            except TypeError:  # networkx < 3.4
                g = nx.node_link_graph(data)
        else:
            g = nx.Graph()
            for number, line in enumerate(path.read_text().splitlines(), 1):
                tokens = line.split("#", 1)[0].split()
                if not tokens:
                    continue
                if len(tokens) not in (2, 3):
                    raise ValueError(f"line {number}: expected 'i j [weight]', got {line.strip()!r}")
                u, v = int(tokens[0]), int(tokens[1])
                g.add_edge(u, v, weight=float(tokens[2]) if len(tokens) == 3 else 1.0)
            if g.number_of_nodes():
                g.add_nodes_from(range(max(g.nodes) + 1))
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise SpecError(f"cannot read graph {path}: {err} (expected node-link JSON or an edge list 'i j [w]')")
    return nx.convert_node_labels_to_integers(g, ordering="sorted")


def load_graph(settings: Settings, folder: Path | None):
    """The graph of the input channel folder when it holds a file, else gnm(n_nodes, n_edges, seed)."""
    import networkx as nx

    files = sorted(p for p in folder.iterdir() if p.is_file()) if folder and folder.is_dir() else []
    if files:
        return read_graph(files[0])
    return nx.gnm_random_graph(settings.n_nodes, settings.n_edges, seed=settings.seed)


# -- the optimizer (shared by both paths) ------------------------------------------------
def initial_params(settings: Settings) -> np.ndarray:
    """Seeded start: ``0.01 * uniform(size=(2, p))`` as in the Braket QAOA example."""
    return 0.01 * np.random.default_rng(settings.seed).uniform(size=(2, settings.n_layers))


def optimizer_step(kind: str, params, grad, state: dict, stepsize: float, *, beta1=0.9, beta2=0.999, eps=1e-8):
    """One update ``(new_params, new_state)``; Adam as in ``qml.AdamOptimizer``."""
    if kind == "sgd":
        return params - stepsize * grad, state
    t = state.get("t", 0) + 1
    m = beta1 * np.asarray(state.get("m", np.zeros_like(params))) + (1 - beta1) * grad
    v = beta2 * np.asarray(state.get("v", np.zeros_like(params))) + (1 - beta2) * grad * grad
    lr = stepsize * np.sqrt(1 - beta2**t) / (1 - beta1**t)
    return params - lr * m / (np.sqrt(v) + eps), {"t": t, "m": m, "v": v}


# -- the two simulators -----------------------------------------------------------------
class _Fast:
    """qhybrid's fast QAOA path."""

    def __init__(self, graph, settings: Settings, device_name: str):
        import torch

        from qhybrid.qaoa import QAOA

        if device_name == "qhybrid.gpu" and not torch.cuda.is_available():
            raise DeviceError("device local:qhybrid/qhybrid.gpu needs CUDA, which is not available; "
                              "use local:qhybrid/qhybrid.cpu")
        dev = "cuda" if device_name == "qhybrid.gpu" else "cpu"
        self.q = QAOA(graph, problem=settings.problem, dtype=settings.dtype, device=dev)

    def energy_and_grad(self, params):
        return self.q.energy_and_grad(params)

    def energy(self, params):
        return self.q.energy(params)

    def top(self, params, k):
        return [(r["bitstring"], r["probability"]) for r in self.q.most_likely(params, k)]


class _PennyLane:
    """The same circuit as a QNode on a PennyLane device."""

    def __init__(self, graph, settings: Settings, device_string: str):
        import pennylane as qml

        from qhybrid.devices import pennylane_device
        from qhybrid.qaoa.pennylane import ansatz, hamiltonians

        n = graph.number_of_nodes()
        self.cost_h, mixer_h = hamiltonians(graph, settings.problem)
        dev = pennylane_device(device_string, wires=n)

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

    def energy_and_grad(self, params):
        from pennylane import numpy as pnp

        grad_fn = self.qml.grad(self.energy_qnode)
        g = grad_fn(pnp.array(params, requires_grad=True))
        return float(grad_fn.forward), np.asarray(g, dtype=np.float64)

    def energy(self, params):
        return float(self.energy_qnode(np.asarray(params)))

    def top(self, params, k):
        p = np.asarray(self.probs_qnode(np.asarray(params)))
        order = np.argsort(-p, kind="stable")[:k]
        return [(format(int(z), f"0{self.n}b"), float(p[z])) for z in order]


def make_simulator(graph, settings: Settings, device_string: str):
    """The fast path for ``local:qhybrid/*``, a QNode for ``local:pennylane/*``.

    Raises:
        DeviceError: a bad device string, or qhybrid.gpu without CUDA.
    """
    from qhybrid.devices import parse_device

    spec = parse_device(device_string)
    if spec.provider == "qhybrid":
        return _Fast(graph, settings, spec.name)
    return _PennyLane(graph, settings, str(spec))


# -- the job ------------------------------------------------------------------------------
def _set_threads() -> None:
    threads = os.environ.get("QHYBRID_TORCH_THREADS")
    if not threads:
        return
    import torch

    torch.set_num_threads(max(1, int(threads)))
    try:
        import numba

        numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))
    except ImportError:  # pragma: no cover
        pass


def _cost_of(bits: str, graph, problem: str) -> float:
    """The cost of one bitstring (wire 0 first) from the graph: -cut, or the Max-Clique cost."""
    z = [int(b) for b in bits]
    if problem == "maxcut":
        return -float(sum(d.get("weight", 1.0) for i, j, d in graph.edges(data=True) if z[i] != z[j]))
    n = len(z)
    comp = [(i, j) for i in range(n) for j in range(i + 1, n) if not graph.has_edge(i, j)]
    return sum(3 * (-0.25 + z[i] * z[j]) for i, j in comp) + sum(1 - 2 * b for b in z)


def run(settings: Settings, *, device_string: str, graph=None) -> dict:
    """Optimise, logging metrics and checkpoints through ``qhybrid.jobs``; returns the result dict.

    Result keys: ``params`` (final), ``cost`` (energy at the final params), ``best_bitstring`` /
    ``best_value`` (the lowest-cost bitstring among the 32 most likely of the final state),
    ``optimum`` and ``optimal_bitstrings`` (exact, from the cost diagonal), ``approximation_ratio``
    (Max-Cut: cost / optimum; Max-Clique: (C_max - cost) / (C_max - C_min)), ``iteration_seconds``,
    ``costs`` (the energy before each step), ``device``, ``n_qubits``, ``n_edges``, ``problem``, ``n_layers``.
    """
    import qhybrid.jobs as jobs
    from qhybrid.qaoa.problem import cost_diagonal

    _set_threads()
    if graph is None:
        graph = load_graph(settings, jobs.input_dir("input-graph"))
    sim = make_simulator(graph, settings, device_string)
    params, state, start, seconds, costs = initial_params(settings), {}, 0, [], []
    saved = jobs.latest_checkpoint(CHECKPOINT_SUFFIX)
    if saved:
        params = np.asarray(saved["params"], dtype=np.float64)
        state = {k: (np.asarray(v) if k != "t" else int(v)) for k, v in saved.get("optimizer_state", {}).items()}
        start, seconds, costs = int(saved["iteration"]), list(saved["iteration_seconds"]), list(saved["costs"])
        if params.shape != (2, settings.n_layers):
            raise SpecError(f"checkpoint params have shape {params.shape}, but n_layers={settings.n_layers}")
    for it in range(start, settings.iterations):
        t0 = time.perf_counter()
        cost, grad = sim.energy_and_grad(params)
        params, state = optimizer_step(settings.optimizer, params, grad, state, settings.stepsize)
        dt = time.perf_counter() - t0
        seconds.append(dt)
        costs.append(float(cost))
        stamp = time.time()  # one timestamp: both metrics land in one row
        jobs.log_metric("Cost", float(cost), timestamp=stamp, iteration_number=it)
        jobs.log_metric("iteration_seconds", dt, timestamp=stamp, iteration_number=it)
        jobs.save_job_checkpoint(
            {"params": params.tolist(), "iteration": it + 1, "iteration_seconds": seconds, "costs": costs,
             "optimizer_state": {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in state.items()}},
            checkpoint_file_suffix=CHECKPOINT_SUFFIX,
        )
    final = float(sim.energy(params))
    top = sim.top(params, 32)
    best_bits = min(top, key=lambda bp: (_cost_of(bp[0], graph, settings.problem), -bp[1]))[0]
    diag = sim.q.diagonal if isinstance(sim, _Fast) else cost_diagonal(graph, settings.problem)
    optimum, optimal = diag.optimum(max_bitstrings=8)
    if settings.problem == "maxcut":
        ratio = final / optimum if optimum else 1.0
    else:
        span = diag.maximum - diag.minimum
        ratio = (diag.maximum - final) / span if span else 1.0
    return {
        "params": params.tolist(), "cost": final, "best_bitstring": best_bits,
        "best_value": _cost_of(best_bits, graph, settings.problem), "optimum": optimum,
        "optimal_bitstrings": optimal, "approximation_ratio": ratio, "iteration_seconds": seconds,
        "costs": costs, "device": device_string, "n_qubits": graph.number_of_nodes(),
        "n_edges": graph.number_of_edges(), "problem": settings.problem, "n_layers": settings.n_layers,
    }


def main() -> dict:
    """Entry point under the job runtime (or standalone)."""
    import qhybrid.jobs as jobs

    settings = parse_settings(jobs.hyperparameters())
    result = run(settings, device_string=jobs.device())
    jobs.save_job_result(result)
    return result


if __name__ == "__main__":
    main()
