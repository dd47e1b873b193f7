"""This machine's whole-job figures: what a job costs beyond its iterations, timed as jobs run.

A job is billed from its start to its end, not per iteration: the job process starts, imports
its libraries (numpy and numba; torch for QML), loads its kernels from the cache, builds its
graph or data, iterates, evaluates and writes its result. :func:`measure_startup` times the
fixed part as a whole: a tiny job of each workload (:data:`TINY`, whose iterations take
milliseconds) run through the job runtime (``Job.create``, the local backend, in a
throw-away ``QHYBRID_HOME``: nothing lands in the user's job list), start to end as the
supervisor bills it. :func:`measure_qaoa_parts` times what a QAOA job adds with its size: the
cost diagonal (one pass over ``2**n`` integers per edge, on one thread) and the ending (the
final energy's forward pass is the model's; the ranking of the likeliest bitstrings and the
optimum from the diagonal here), per amplitude. :func:`measure_qaoa_in_job` times the QAOA
iteration inside a short real job against the same iteration timed as the calibration times it
(the local prediction's iteration is scaled by their ratio). All run in a fresh interpreter of
their own (``calibrate.isolated``) from :func:`qhybrid.estimate.calibrate.local_calibration`.
"""
from __future__ import annotations

import os
import time

#: A tiny job of each workload: its iterations take milliseconds, so its time is the fixed part.
TINY = {
    "qaoa": {"n_nodes": "8", "n_edges": "12", "iterations": "1", "starts": "1"},
    "qml": {"nwires": "4", "ndata": "16", "batch_size": "16", "epochs": "1"},
}
STARTUP_RUNS = 3
IN_JOB_NODES = 20  # the in-job iteration's size: 17-21 simulated qubits, where the iteration rates are measured
IN_JOB_ITERATIONS = 30  # about a second of iterations here
PARTS_NODES = 24  # the QAOA parts' size: its int32 diagonal (64 MiB) past the last-level cache, as a large job's is
DEVICE = "local:qhybrid/qhybrid.cpu"


def _job_tree_cpu() -> float:
    """CPU seconds of this process's reaped children (the supervisor and the job under it)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _reap() -> None:
    """Wait for every child of this (calibration-only) process: the supervisor ends after the job."""
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return


def _run_job(workload: str, hyperparameters: dict):
    """A ``workload`` job run to its end through the job runtime (in this process's ``QHYBRID_HOME``);
    its store row and its Job.

    Raises:
        JobError: the job did not complete (the tail of its log).
    """
    import qhybrid.workloads.qaoa as wq
    import qhybrid.workloads.qml as wm
    from qhybrid import Job
    from qhybrid.jobs import store

    source = {"qaoa": wq.__file__, "qml": wm.__file__}[workload]
    job = Job.create(DEVICE, source, workload, hyperparameters=hyperparameters).wait()
    _reap()
    row = store.get(job.name)
    if str(row["state"]).split(".")[-1] != "COMPLETED":
        from qhybrid.errors import JobError

        raise JobError(f"the calibration's {workload} job ended {row['state']}: {job.logs()[-300:]}")
    return row, job


def measure_startup(workload: str, runs: int = STARTUP_RUNS) -> float:
    """Seconds of a tiny ``workload`` job (:data:`TINY`) from start to end as billed, as an idle machine
    would take them: the least over ``runs`` jobs of ``min(start to end, CPU seconds of the supervisor and
    the job)`` (on a shared machine the wall-clock waits for other processes; the CPU time does not).

    Runs the jobs in a temporary ``QHYBRID_HOME`` (set for this process: call it in a fresh interpreter,
    ``calibrate.isolated``); the kernel cache is the user's, as a real job's is."""
    import tempfile

    best = float("inf")
    with tempfile.TemporaryDirectory(prefix="qhybrid-calibrate-") as home:
        os.environ["QHYBRID_HOME"] = home
        for _ in range(runs):
            cpu = _job_tree_cpu()
            row, _ = _run_job(workload, TINY[workload])
            best = min(best, row["ended"] - row["started"], _job_tree_cpu() - cpu)
    return best


def measure_qaoa_in_job(n: int = IN_JOB_NODES, iterations: int = IN_JOB_ITERATIONS) -> float:
    """How much longer the QAOA job's iteration takes than the calibration's (``calibrate.measure_qaoa``
    times it as an idle machine with a core per thread would: ``min(wall-clock, main thread's CPU)``): the
    median wall-clock of a short real job's iterations (one start on gnm(n, 1.5 n), p = 2; its first left
    out, buffers faulted in) over ``calibrate._best`` of the same iteration timed just before in this
    process, held between 1 and the thread count.

    Why: a job is billed its wall-clock, and the sweep's threads finish together only when each has a core
    the whole time. On a virtual machine whose cores are not all its own all the time (measured on the
    shared 2-core VM, with nothing else running in it: for minutes the wall-clock of the 20-node iteration
    was 1.9-2.0x its main thread's CPU time, which stops while that thread waits for a core, then again
    1.0-1.1x) the calibration's clock saw half the iteration the jobs paid for. Past the thread count
    the wall-clock waits for other processes, which the calibration leaves out by design."""
    import statistics
    import tempfile

    from qhybrid.estimate.calibrate import _best, qaoa_iteration
    from qhybrid.jobs.instances import local_cores

    isolated = _best(qaoa_iteration(n, 2), repeats=5)
    hp = {"n_nodes": str(n), "n_edges": str(int(1.5 * n)), "iterations": str(iterations), "starts": "1"}
    with tempfile.TemporaryDirectory(prefix="qhybrid-calibrate-") as home:
        os.environ["QHYBRID_HOME"] = home
        _, job = _run_job("qaoa", hp)
        seconds = statistics.median(job.result()["iteration_seconds"][1:])
    return min(max(1.0, seconds / isolated), float(local_cores()))


def _seconds(fn) -> float:
    """``min(wall-clock, main thread's CPU)`` of one call (as ``calibrate._best`` counts, without a warm-up:
    each part runs once in a job)."""
    c, t = time.thread_time(), time.perf_counter()
    fn()
    return min(time.perf_counter() - t, time.thread_time() - c)


def _wall(fn) -> float:
    """Wall-clock seconds of one call."""
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def measure_qaoa_parts(n: int = PARTS_NODES) -> tuple[float, float, float]:
    """``(diagonal s per amplitude per edge, first sweep's extra s per buffer byte, ending s per simulated
    amplitude)`` of the QAOA job on gnm(n, 1.5 n), each the best of two:

    - the cost diagonal built as the job builds it (``qaoa.problem.cost_diagonal``), over ``2**n`` x edges;
    - the first energy+gradient's time over a later one's (the sweep's buffers planned and faulted in;
      the kernels are loaded first, at 8 nodes, as the tiny job of :func:`measure_startup` loads them),
      over the buffers' bytes (``work.qaoa_work(...).working_set_bytes``): once, by the wall-clock, before
      any other large buffer of the process, as a job's first sweep runs (measured after the diagonals
      and a first simulator, the best of two saw 0.1-0.7 ns a byte at 24 nodes where the jobs' first
      iterations paid 1.3: a fresh simulator's buffers partly land on pages freed before);
    - the job's ending less its two forward passes (the final energy, and the one ``top`` runs: the
      model counts them as one more energy+gradient): the ranking of the likeliest bitstrings and
      ``qaoa_report.answer``, over ``2**(n-1)``."""
    import numpy as np

    from qhybrid.estimate.work import qaoa_work
    from qhybrid.qaoa.problem import cost_diagonal, random_graph
    from qhybrid.workloads import numba_load
    from qhybrid.workloads import qaoa as wq
    from qhybrid.workloads import qaoa_report as report
    from qhybrid.workloads.qaoa import TOP_K

    numba_load.skip_blas_probe()
    params = np.full((2, 2), 0.3)

    def simulator(nodes: int):
        g = random_graph(nodes, int(1.5 * nodes), seed=1967)
        return g, wq.make_simulator(g, wq.parse_settings({"n_nodes": str(nodes), "n_edges": str(g.n_edges)}), DEVICE)

    simulator(8)[1].energy_and_grad(params)  # the kernels, loaded once per process

    def first_call() -> float:  # a new simulator's first sweep less its second; its buffers freed on return
        _, fresh = simulator(n)  # by the wall-clock: the sweep's threads fault the pages in, and the faults queue
        return _wall(lambda: fresh.energy_and_grad(params)) - _wall(lambda: fresh.energy_and_grad(params))

    first = first_call()  # once, first: as in a job, the process's first large buffers (a later one reuses pages)
    graph, sim = simulator(n)
    edges = graph.n_edges
    diagonal = min(_seconds(lambda: cost_diagonal(graph, "maxcut")) for _ in range(2))
    ending = min(_seconds(lambda: report.answer(graph, "maxcut", sim.diagonal, float(sim.energy(params)),
                                                sim.top(params, TOP_K)))
                 - 2 * _seconds(lambda: sim.energy(params)) for _ in range(2))
    buffers = qaoa_work(n, 2).working_set_bytes
    return diagonal / (2**n * edges), max(0.0, first) / buffers, max(0.0, ending) / 2 ** (n - 1)
