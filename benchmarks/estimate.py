"""Predicted vs measured seconds per iteration on this machine (not in CI).

    PYTHONPATH=src python benchmarks/estimate.py                    # QAOA 16..24, QML 8..16, probes
    PYTHONPATH=src python benchmarks/estimate.py --quick            # fewer sizes
    PYTHONPATH=src python benchmarks/estimate.py --seed-table       # the seed's cost table, recomputed
    PYTHONPATH=src python benchmarks/estimate.py --iterations-suite # QAOA iterations to convergence (the model's data)
    PYTHONPATH=src python benchmarks/estimate.py --jobs             # whole jobs: predicted total vs billed, ten commands

``--jobs`` runs ten real ``qhybrid qaoa`` / ``qhybrid qml`` commands (16-26 qubits, each 10 s or more
on the idle 2-core machine, about five minutes in all with the calibration), each after its
``qhybrid estimate`` with the same options, and tables the local row's predicted total against the
job's time from start to end (what is billed, in whole seconds).

For each size: the ``local`` row of ``estimate_job`` (the model on this machine's
calibration, or the PennyLane probe) against the median of a few real iterations
(QAOA: the workload's energy+gradient and optimizer step; QML on our engine: the job's
own epoch of ``workloads.qml`` per step, evaluation included, what a ``qhybrid qml`` job's
``epoch_seconds`` over its steps is; on PennyLane devices, whose probe models the step: one
training step on a batch of 16), each in a fresh interpreter. Measured = the
smaller of the median wall-clock and the best CPU time (our engines: the main
thread's, which runs the serial parts and its share of each parallel region;
PennyLane devices: the process's), what an idle machine would take (the
calibration counts the same way); the wall-clock is printed beside. Targets: within +-25 % for our engines, +-50 %
for probed PennyLane devices. Absolute times drift on shared machines: run it
twice and compare.
"""
from __future__ import annotations

import argparse
import os
import statistics
from pathlib import Path


def _median(fn, repeats: int, device: str) -> list[float]:
    """Median wall-clock, best CPU and median CPU seconds of ``fn()`` after a warm-up call, counted as
    the calibration counts them (``calibrate.timings``: our engines by the main thread's CPU time,
    PennyLane devices by the process's; the calibration keeps the best, so does "measured")."""
    from qhybrid.estimate.calibrate import timings

    walls, cpus = timings(fn, repeats, cpu="main" if device.startswith("local:qhybrid/") else "process")
    return [statistics.median(walls), min(cpus), statistics.median(cpus)]


def _qaoa_kwargs(n: int, device: str, iterations: int = 10, instance: str = "ml.m5.2xlarge") -> dict:
    import qhybrid.workloads.qaoa as wq
    from qhybrid.jobs import InstanceConfig

    hp = {"n_nodes": str(n), "n_edges": str(int(1.5 * n)), "n_layers": "2", "iterations": str(iterations),
          "starts": "1"}
    return {"device": device, "source_module": wq.__file__, "entry_point": "qaoa", "hyperparameters": hp,
            "instance_config": InstanceConfig(instanceType=instance)}


def _qml_kwargs(n: int, device: str, *, batch: int = 16, epochs: int = 1, ndata: int = 208,
                instance: str = "ml.m5.2xlarge", count: int = 1, parallel: bool = False) -> dict:
    import qhybrid.workloads.qml as wm
    from qhybrid.jobs import InstanceConfig

    hp = {"nwires": str(n), "batch_size": str(batch), "epochs": str(epochs), "ndata": str(ndata)}
    out = {"device": device, "source_module": wm.__file__, "entry_point": "qml", "hyperparameters": hp,
           "instance_config": InstanceConfig(instanceType=instance, instanceCount=count)}
    if parallel:
        out["distribution"] = "data_parallel"
    return out


def measure_qaoa(n: int, device: str, repeats: int) -> float:
    import networkx as nx

    from qhybrid.workloads import qaoa_optimize as opt
    from qhybrid.workloads.qaoa import make_simulator, parse_settings

    settings = parse_settings(_qaoa_kwargs(n, device)["hyperparameters"])
    sim = make_simulator(nx.gnm_random_graph(n, int(1.5 * n), seed=1967), settings, device)
    params, state = opt.seed_start(settings.n_layers, settings.seed), {}

    def step():  # one iteration of the job's loop: a batched energy+gradient (one start) and an Adam step
        nonlocal params, state
        _, grad = sim.energy_and_grad(params)
        params, state = opt.step("adam", params, grad, state, 0.1)

    return _median(step, repeats, device)


def measure_qml(n: int, device: str, repeats: int, batch: int = 16) -> list[float]:
    """Our engines: the job's own epoch over its steps (``workloads.qml``: its threads, Sonar sampled and split,
    its DataLoader, ``train_epoch``, the StepLR step and ``evaluate`` of the held-out quarter), what
    ``epoch_seconds`` over the steps of a real ``qhybrid qml`` job is: ``[median wall-clock, best CPU, median
    CPU]`` per step. "Best CPU" adds up the epoch from short samples, as the calibration takes them: the
    fastest full-batch training step, plus the fastest evaluation and the fastest rest of an epoch (its
    DataLoader start, the StepLR step) over the steps; a whole epoch's best CPU time on a shared machine is
    one long sample, and rarely catches the other processes idle. PennyLane devices: one training step
    (their probe models the step alone; an epoch of lightning.qubit at 14 wires takes ~15 s)."""
    import math
    import time

    import torch

    import qhybrid.workloads.qml as wm
    from qhybrid.estimate.calibrate_qml import qml_step
    from qhybrid.qml import load_sonar
    from qhybrid.qml.data import sample

    settings = wm.parse_settings(_qml_kwargs(n, device, batch=batch)["hyperparameters"])
    wm.set_threads(device)
    model, where = wm.build_model(settings, device)
    if not device.startswith("local:qhybrid/"):
        return _median(qml_step(model, batch), repeats, device)
    X, y = sample(*load_sonar(None), settings.ndata, seed=settings.seed)
    train, held = wm.split(y, settings.val_fraction, seed=settings.seed)
    data = torch.utils.data.TensorDataset(X[train], y[train])
    sampler = torch.utils.data.DistributedSampler(data, num_replicas=1, rank=0, shuffle=True, seed=settings.seed)
    loader = torch.utils.data.DataLoader(data, batch_size=batch, sampler=sampler)
    optimizer = torch.optim.Adam(model.parameters(), lr=settings.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=settings.gamma)
    steps = math.ceil(len(train) / batch)
    parts = {"step": [], "eval": [], "rest": []}
    job_step = wm.train_step

    def timed_step(net, opt, xb, yb):  # the job's step, its main-thread CPU time noted (train_epoch calls it)
        began = time.thread_time()
        out = job_step(net, opt, xb, yb)
        if len(yb) == batch:
            parts["step"].append(time.thread_time() - began)
        parts["epoch_steps"] += time.thread_time() - began
        return out

    wm.train_step = timed_step

    def run():  # one epoch of the job's loop
        began = time.thread_time()
        parts["epoch_steps"] = 0.0
        sampler.set_epoch(len(parts["eval"]) + 1)
        wm.train_epoch(model, optimizer, loader, where)
        scheduler.step()
        t = time.thread_time()
        wm.evaluate(model, X[held], y[held], where)
        parts["eval"].append(time.thread_time() - t)
        parts["rest"].append(t - began - parts["epoch_steps"])

    wall, _, cpu_median = _median(run, repeats, device)
    best = min(parts["step"]) + (min(parts["eval"]) + max(0.0, min(parts["rest"]))) / steps
    return [wall / steps, best, cpu_median / steps]


def isolated(name: str, *args) -> float:
    """Run one measurement in a fresh interpreter (as a job would): no threads left spinning by another."""
    import json
    import os
    import subprocess
    import sys

    code = (f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import estimate; "
            f"print(json.dumps(estimate.{name}(*json.loads(sys.argv[1]))))")
    out = subprocess.run([sys.executable, "-c", code, json.dumps(list(args))], check=True, capture_output=True,
                         text=True, env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}).stdout
    return json.loads(out.strip().splitlines()[-1])


def _recalibrated(cal, workload: str):
    """``cal`` with ``workload``'s engine measured again now (a fresh interpreter, as the calibration does)."""
    from dataclasses import replace

    from qhybrid.estimate.calibrate import isolated

    if workload == "qaoa":
        iteration, call, serial, small, mid, large = isolated("calibrate.measure_qaoa")
        return replace(cal, qaoa_iteration_s=iteration, qaoa_call_s=call, qaoa_serial_gflops=serial,
                       qaoa_parallel_small_gflops=small, qaoa_parallel_gflops=mid, qaoa_parallel_large_gflops=large)
    step, small, mid, rate, large, ev, fresh, huge, touch = isolated(
        "calibrate_qml.measure_qml", cal.pool_wake_s, cal.pool_submit_s, cal.cache_bandwidth_gbs, cal.thread_bandwidth_gbs)
    return replace(cal, qml_step_s=step, qml_small_gflops=small, qml_mid_gflops=mid, qml_gflops=rate,
                   qml_large_gflops=large, qml_eval_s=ev, fresh_s_per_gb=fresh, qml_huge_gflops=huge,
                   touch_s_per_gb=touch)


def accuracy(quick: bool, interleave: bool, which: str = "all") -> list[dict]:
    from qhybrid.estimate import estimate_job
    from qhybrid.estimate.calibrate import local_calibration

    cases = [("qaoa", "local:qhybrid/qhybrid.cpu", n, 25 if n < 22 else 5) for n in
             ((16, 20, 24) if quick else (16, 18, 20, 22, 24))]
    cases += [("qml", "local:qhybrid/qhybrid.cpu", n, 5 if n < 14 else 2) for n in  # epochs
              ((8, 12, 16) if quick else (8, 10, 12, 14, 16))]
    cases += [("qaoa", "local:pennylane/lightning.qubit", n, 2) for n in ((18, 20) if quick else (18, 20, 22))]
    cases += [("qml", "local:pennylane/lightning.qubit", n, 2) for n in ((10, 14) if quick else (10, 12, 14))]
    if which != "all":
        cases = [c for c in cases if (c[1].startswith("local:qhybrid/")) == (which == "ours")]
    rows = []
    for workload, device, n, repeats in cases:
        kwargs = _qaoa_kwargs(n, device) if workload == "qaoa" else _qml_kwargs(n, device)
        cal = local_calibration()
        if interleave and device.startswith("local:qhybrid/"):
            cal = _recalibrated(cal, workload)
        est = estimate_job(kwargs, instances=["ml.m5.2xlarge"], calibration=cal)
        local = est.row("local")
        wall, cpu, cpu_median = isolated(f"measure_{workload}", n, device, repeats)
        measured = min(wall, cpu)  # as on an idle machine (the shared one's waiting left out)
        err = local.seconds_per_iteration / measured - 1
        target = 0.25 if local.method == "model" else 0.50
        rows.append({"workload": workload, "device": device.rsplit("/", 1)[-1], "n": n, "method": local.method,
                     "predicted_s": local.seconds_per_iteration, "measured_s": measured, "wall_s": wall,
                     "cpu_median_s": cpu_median,
                     "error": err, "within": abs(err) <= target})
        print(f"| {workload} | {rows[-1]['device']} | {n} | {local.method} | {local.seconds_per_iteration:.4g} | "
              f"{measured:.4g} | {cpu_median:.4g} | {wall:.4g} | {100 * err:+.0f} % | {'yes' if rows[-1]['within'] else 'NO'} |",
              flush=True)
    return rows


def iteration_suite(sizes, seeds: int, layers) -> list[dict]:
    """Iterations the job's default schedule takes to converge on gnm(n, 1.5 n, seed) (no job runtime:
    the workload's own optimizer on its own simulator); the data behind ``estimate/iterations.py``."""
    import json
    import statistics

    import networkx as nx

    import qhybrid.workloads.qaoa as w
    from qhybrid.estimate.iterations import qaoa_iterations
    from qhybrid.workloads import qaoa_optimize as opt

    rows = []
    for p in layers:
        for n in sizes:
            for seed in range(seeds):
                s = w.parse_settings({"n_nodes": str(n), "n_edges": str(int(1.5 * n)), "n_layers": str(p),
                                      "seed": str(seed)})
                sim = w.make_simulator(nx.gnm_random_graph(n, int(1.5 * n), seed=seed), s, "local:qhybrid/qhybrid.cpu")
                st = opt.optimize(s.schedule(), sim.energy, sim.energy_and_grad)
                rows.append({"n": n, "p": p, "seed": seed, "total": st["iteration"],
                             "per_stage": [st["layers"].count(d) for d in range(1, p + 1)]})
                print(json.dumps(rows[-1]), flush=True)
        totals = sorted(r["total"] for r in rows if r["p"] == p)
        e = qaoa_iterations(layers=p, max_iterations=s.max_iterations, window=s.window, tolerance=s.tolerance,
                            stepsize=s.stepsize)
        k = len(totals)
        print(f"p = {p}: mean {statistics.mean(totals):.1f}, median {statistics.median(totals)}, p10-p90 "
              f"{totals[k // 10]}-{totals[(9 * k) // 10]}, min-max {totals[0]}-{totals[-1]} over {k} runs; "
              f"model: {e.iterations} expected, 80 % {e.low}-{e.high}", flush=True)
    return rows


QAOA_SEED = "--preset seed-timing"  # the seed's study: 5 Adam steps of 0.1 from its 0.01 * uniform start, p = 2
QML_SEED = "--wires 26 --data 192 --val-fraction 0 --batch-size 32 --epochs 1"  # an epoch of 192 samples
SEED = [  # the seed document's figures: (what, USD, estimate arguments with the seed's device, ours)
    ("QAOA 18 qubits, 1 x ml.m5.2xlarge", 0.016, f"qaoa {QAOA_SEED} --nodes 18 --edges 24 --instance ml.m5.2xlarge",
     "local:pennylane/lightning.qubit", "local:qhybrid/qhybrid.cpu"),
    ("QAOA 18 qubits, 1 x ml.p3.2xlarge", 0.064, f"qaoa {QAOA_SEED} --nodes 18 --edges 24 --instance ml.p3.2xlarge",
     "local:pennylane/lightning.gpu", "local:qhybrid/qhybrid.gpu"),
    ("QAOA 24 qubits, 1 x ml.m5.2xlarge", 2.27, f"qaoa {QAOA_SEED} --nodes 24 --edges 32 --instance ml.m5.2xlarge",
     "local:pennylane/lightning.qubit", "local:qhybrid/qhybrid.cpu"),
    ("QAOA 24 qubits, 1 x ml.p3.2xlarge", 0.78, f"qaoa {QAOA_SEED} --nodes 24 --edges 32 --instance ml.p3.2xlarge",
     "local:pennylane/lightning.gpu", "local:qhybrid/qhybrid.gpu"),
    ("QML 26 qubits, 1 x ml.p3.16xlarge, one GPU", 20.0, f"qml {QML_SEED} --instance ml.p3.16xlarge",
     "local:pennylane/lightning.gpu", "local:qhybrid/qhybrid.gpu"),
    ("QML 26 qubits, 4 x ml.p3.16xlarge, 32 GPUs", 2.8,
     f"qml {QML_SEED} --instance ml.p3.16xlarge --data-parallel --instance-count 4",
     "local:pennylane/lightning.gpu", "local:qhybrid/qhybrid.gpu"),
]


def seed_table() -> None:
    """The seed's figures beside ``qhybrid estimate``'s, each row one CLI command (printed, then run)."""
    import json
    import subprocess
    import sys

    from qhybrid.estimate.render import _seconds
    from qhybrid.jobs.instances import format_usd, get_instance

    print("| run | seed | seed's billed time | estimate, seed's device | estimate, qhybrid | command |")
    print("| --- | --- | --- | --- | --- | --- |")
    for what, usd, args, device, ours in SEED:
        inst = args.split("--instance ")[1].split()[0]
        count = int(args.split("--instance-count ")[1].split()[0]) if "--instance-count" in args else 1
        implied = usd / (get_instance(inst).usd_per_second * count)
        cells = []
        for dev in (device, ours):
            argv = ["estimate", *args.split(), "--device", dev, "--instances", inst, "--json"]
            out = subprocess.run([sys.executable, "-m", "qhybrid", *argv], check=True, capture_output=True,
                                 text=True).stdout
            row = next(r for r in json.loads(out)["rows"] if r["target"] == inst)
            fits = "" if row["fits"] is not False else ", does NOT fit"
            cost = format_usd(row["cost_usd"], row["approximate"]) if row["cost_usd"] is not None else "unknown"
            cells.append(f"{cost} ({_seconds(row['total_seconds'])}, {row['method']}{fits})")
        print(f"| {what} | ${usd} | {_seconds(implied)} | {cells[0]} | {cells[1]} | "
              f"`qhybrid estimate {args} --device {device}` |", flush=True)


# (workload, options): whole jobs of 10 s or more here (the 2-core AMD EPYC, idle)
JOBS = [
    ("qaoa", "--nodes 18 --edges 27 --iterations 250"),
    ("qaoa", "--nodes 20 --edges 30 --iterations 80"),
    ("qaoa", "--nodes 22 --edges 33 --iterations 20"),
    ("qaoa", "--nodes 24 --edges 36 --iterations 5"),
    ("qaoa", "--nodes 26 --edges 39 --iterations 2 --starts 2"),
    ("qml", "--wires 16 --epochs 5"),
    ("qml", "--wires 18 --data 64 --epochs 4"),
    ("qml", "--wires 20 --data 48 --epochs 1"),
    ("qml", "--wires 22 --data 16 --epochs 1"),
    ("qml", "--wires 24 --data 8 --epochs 1"),
]


def _cli(*argv: str) -> dict:
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "qhybrid", *argv], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def whole_jobs(cases=JOBS) -> list[dict]:
    """Each command's ``qhybrid estimate`` (the local row's total) against the real job's time from start to
    end (``measured_seconds``; billed: its whole seconds), run one after the other on this machine."""
    from qhybrid import Job

    print("| command | predicted total | of which fixed | measured (start to end) | billed | error | load before |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    rows = []
    for workload, options in cases:
        est = _cli("estimate", workload, *options.split(), "--instances", "ml.m5.2xlarge", "--json")
        local = next(r for r in est["rows"] if r["target"] == "local")
        load = os.getloadavg()[0]
        run = _cli(workload, *options.split(), "--quiet", "--json")
        info = Job(run["job"]).describe()
        measured, billed = info["measured_seconds"], info["billed_seconds"]
        err = local["total_seconds"] / measured - 1
        rows.append({"workload": workload, "options": options, "predicted_s": local["total_seconds"],
                     "fixed_s": local["fixed_seconds"], "measured_s": measured, "billed_s": billed, "error": err,
                     "state": run["state"], "load": load})
        print(f"| `qhybrid {workload} {options}` | {local['total_seconds']:.1f} s | {local['fixed_seconds']:.1f} s | "
              f"{measured:.1f} s | {billed:.0f} s | {100 * err:+.0f} % | {load:.1f} |", flush=True)
    ok = sum(abs(r["error"]) <= 0.25 for r in rows)
    print(f"{ok}/{len(rows)} within +-25 %; load average after: {os.getloadavg()}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seed-table", action="store_true")
    parser.add_argument("--iterations-suite", action="store_true",
                        help="iterations the default QAOA job takes to converge, n = 10..18, 8 seeds, p = 1..3")
    parser.add_argument("--jobs", action="store_true",
                        help="whole jobs: ten qhybrid qaoa/qml commands, predicted total vs measured start to end")
    parser.add_argument("--only", choices=("qaoa", "qml"), default=None,
                        help="with --jobs: only this workload's commands (a quiet window of under 10 minutes each)")
    parser.add_argument("--cases", choices=("all", "ours", "probe"), default="all",
                        help="our engines, the probed PennyLane devices, or both")
    parser.add_argument("--interleave", action="store_true",
                        help="measure the engine's calibration again right before each of our engines' "
                             "measurements (a shared machine's load drifts in minutes: this separates the model's "
                             "error from the drift)")
    parser.add_argument("--keep-calibration", action="store_true",
                        help="use the cached calibration (default: measure this machine again first)")
    args = parser.parse_args()
    if args.seed_table:
        seed_table()
        return
    if args.iterations_suite:
        iteration_suite((10, 12, 14, 16, 18), 8, (1, 2, 3))
        return
    from qhybrid.estimate.calibrate import local_calibration

    cal = local_calibration(refresh=not args.keep_calibration)
    print(f"calibration: {cal}")
    print(f"load average before: {os.getloadavg()}")
    if args.jobs:
        whole_jobs([c for c in JOBS if args.only in (None, c[0])])
        return
    print("| workload | device | n | how | predicted s/iter | measured s/iter (best CPU) | median CPU | median "
          "wall-clock | error | within target |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    rows = accuracy(args.quick, args.interleave, args.cases)
    ok = sum(r["within"] for r in rows)
    print(f"{ok}/{len(rows)} within target ({Path(__file__).name}); load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
