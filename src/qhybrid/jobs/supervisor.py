"""The supervisor: one per job; owns its state transitions, logs, metrics, limits and cancellation.

Started detached (``python -m qhybrid.jobs.supervisor NAME`` in its own
session) so the job outlives its caller, or called in-process
(``Supervisor(name, backend=inprocess.Backend()).run()``): the same code path.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import socket
import sys
import threading
import time
import traceback

from qhybrid.jobs import environments, instances, metrics, procs, store
from qhybrid.jobs.backends import ProcessSpec, get_backend
from qhybrid.jobs.environments import EnvironmentBuildError
from qhybrid.jobs.spec import JobSpec

POLL_S = 0.05
TB_LINES = 25
_INHERITED = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
STANDINS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "standins")
BRAKET_HINT = "the script imports the Braket SDK, which is not installed: pip install 'qhybrid[braket]'"


def load_spec(name: str) -> JobSpec:
    return JobSpec.from_json((store.job_dir(name) / "spec.json").read_text(encoding="utf-8"))


def free_port() -> int:
    """Return a free TCP port on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def job_env(spec: JobSpec, *, rank: int = 0, port: int | None = None) -> dict[str, str]:
    """Return the full environment of one process of a job (the Braket contract plus resources)."""
    folder = store.job_dir(spec.name)
    inst = instances.get_instance(spec.instance_type)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AMZN_BRAKET_") and k not in _INHERITED}
    world = spec.world_size
    threads = str(instances.threads_for(inst, world, spec.instance_count if spec.distribution else 1))
    gpus = min(inst.gpus, instances.local_gpus())
    source = str(folder / "source")
    if spec.distribution == "data_parallel" and importlib.util.find_spec("smdistributed") is None:
        source = os.pathsep.join((source, STANDINS))  # smdistributed.dataparallel over torch.distributed
    env.update(
        AMZN_BRAKET_DEVICE_ARN=spec.device,
        AMZN_BRAKET_HP_FILE=str(folder / "hyperparameters.json"),
        AMZN_BRAKET_INPUT_DIR=str(folder / "input"),
        AMZN_BRAKET_JOB_RESULTS_DIR=str(folder / "results"),
        AMZN_BRAKET_CHECKPOINT_DIR=str(folder / "checkpoints"),
        AMZN_BRAKET_JOB_NAME=spec.name,
        PYTHONUNBUFFERED="1",
        PYTHONPATH=os.pathsep.join(p for p in (source, env.get("PYTHONPATH", "")) if p),
        OMP_NUM_THREADS=threads,
        MKL_NUM_THREADS=threads,
        QHYBRID_TORCH_THREADS=threads,
        QHYBRID_HOME=str(store.home()),
        CUDA_VISIBLE_DEVICES=",".join(str(i) for i in range(gpus)),
    )
    if spec.distribution:
        env.update(
            RANK=str(rank),
            LOCAL_RANK=str(rank % spec.processes_per_instance),
            WORLD_SIZE=str(world),
            LOCAL_WORLD_SIZE=str(spec.processes_per_instance),
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=str(port),
        )
    return env


_TRACEBACK = "Traceback (most recent call last)"


def traceback_tail(text: str, limit: int = TB_LINES) -> str:
    """Return the last traceback in ``text`` (at most ``limit`` lines), else its last lines."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(_TRACEBACK)]
    tail = lines[starts[-1]:] if starts else lines[-10:]
    return "\n".join(tail[-limit:])


class Supervisor:
    """Runs one QUEUED job to a terminal state.

    Args:
        name: the job's name (its folder and row must exist).
        backend: a backend instance; default from the spec (``local``).
    """

    def __init__(self, name: str, *, backend=None):
        self.name = name
        self.folder = store.job_dir(name)
        self.spec = load_spec(name)
        self.backend = backend or get_backend(self.spec.backend)
        self._lock = threading.Lock()
        self._log = None
        self._rank_logs: dict[int, object] = {}
        self._metrics = None
        self._stop_signal = None

    # -- output -------------------------------------------------------------
    def emit(self, text: str) -> None:
        with self._lock:
            self._log.write(text + "\n")

    def on_line(self, rank: int, line: str) -> None:
        """Record one line a process printed: its log, the job log, and metrics."""
        tagged = metrics.tag_rank(line, rank) if self.spec.distribution else line
        row = metrics.parse_line(line, rank=rank if self.spec.distribution else None)
        with self._lock:
            self._rank_logs[rank].write(tagged + "\n")
            prefix = f"[rank {rank}] " if self.spec.distribution and rank else ""
            self._log.write(prefix + tagged + "\n")
            if row is not None:
                self._metrics.write(json.dumps(row) + "\n")

    # -- lifecycle ----------------------------------------------------------
    def processes(self, python: str | None = None) -> list[ProcessSpec]:
        spec = self.spec
        port = free_port() if spec.distribution else None
        argv = [python or sys.executable, "-m", "qhybrid.jobs.entry", str(self.folder / "source"), spec.entry_point]
        if spec.extra.get("call"):
            argv.append(str(self.folder / "source" / "_qhybrid_call.json"))
        return [
            ProcessSpec(rank=r, argv=argv, env=job_env(spec, rank=r, port=port), cwd=str(self.folder / "source"))
            for r in range(spec.world_size)
        ]

    def run(self) -> str:
        """Run the job; return its final state. Never raises for the job's own failure."""
        row = store.get(self.name)
        if row["state"] != "QUEUED":
            return row["state"]
        store.update(self.name, supervisor_pid=os.getpid(), supervisor_start=procs.start_time(os.getpid()))
        logs = self.folder / "logs"
        self._log = open(logs / "job.log", "a", buffering=1, encoding="utf-8")
        self._metrics = open(self.folder / "metrics.jsonl", "a", buffering=1, encoding="utf-8")
        try:
            python = self._environment()
            specs = self.processes(python)
            for p in specs:
                self._rank_logs[p.rank] = open(logs / f"rank-{p.rank}.log", "a", buffering=1, encoding="utf-8")
            prepare = getattr(self.backend, "prepare", None)  # e.g. Ray: wait for cluster room while QUEUED
            if prepare is not None:
                prepare(specs, self.on_line, lambda: (self.folder / "cancel").exists() or bool(self._stop_signal))
            started = time.time()
            if not store.transition(self.name, "RUNNING", from_states=("QUEUED",), started=started):
                return store.get(self.name)["state"]
            spec = self.spec
            self.emit(
                f"qhybrid: job {spec.name} running {spec.entry_point} on {spec.device}, "
                f"{spec.instance_count} x {spec.instance_type}, {len(specs)} process(es)"
            )
            state, reason, tb = self._watch(specs, started)
        except EnvironmentBuildError as err:  # the job's requirements: pip's message, no script ran
            state, reason, tb, started = "FAILED", f"installing the job's requirements failed: {err}", None, time.time()
        except BaseException as err:  # the supervisor's own failure
            self.backend.kill(grace=1.0)
            state, reason, tb = "FAILED", f"supervisor error: {err!r}", traceback.format_exc()
            started = store.get(self.name)["started"] or time.time()
        return self._finish(state, reason, tb, started)

    def _environment(self) -> str | None:
        """Build (or reuse) the job's own environment when its source has requirements; its python."""
        env = self.spec.extra.get("environment")
        if not env:
            return None
        if self.spec.in_process or self.spec.backend != "local":
            where = "in-process jobs" if self.spec.in_process else f"the {self.spec.backend} backend"
            self.emit(f"qhybrid: requirements.txt not installed: {where} use the caller's interpreter")
            return None
        python = environments.ensure(env["requirements"], env_key=env["key"], log=self.emit)
        return str(python)

    def _watch(self, specs, started):
        spec = self.spec
        inst = instances.get_instance(spec.instance_type)
        self.backend.launch(specs, self.on_line)
        store.update(self.name, processes=json.dumps(self.backend.groups()))
        cancel_file = self.folder / "cancel"
        while True:
            codes = self.backend.poll()
            failed = sorted(r for r, c in codes.items() if c not in (None, 0))
            elapsed = time.time() - started
            if failed:
                self.backend.kill()
                self.backend.drain()
                rank = self._cause(failed)
                return self._failure(rank, codes[rank])
            if codes and all(c == 0 for c in codes.values()):
                self.backend.drain()
                return "COMPLETED", None, None
            if cancel_file.exists():
                self.backend.kill()
                return "CANCELLED", "cancelled on request", None
            if self._stop_signal:
                self.backend.kill(grace=1.0)
                return "FAILED", f"supervisor stopped by signal {self._stop_signal}", None
            if spec.max_runtime and elapsed > spec.max_runtime:
                self.backend.kill()
                return "FAILED", f"max_runtime of {spec.max_runtime:g} s exceeded", None
            if spec.max_cost is not None:
                spent = instances.cost(elapsed, inst, spec.instance_count)
                if spent is not None and spent >= spec.max_cost:
                    self.backend.kill()
                    return "FAILED", f"max_cost of ${spec.max_cost:g} reached (estimated ${spent:.6f})", None
            time.sleep(POLL_S)

    def _rank_log(self, rank) -> str:
        return (self.folder / "logs" / f"rank-{rank}.log").read_text(encoding="utf-8", errors="replace")

    def _cause(self, failed: list) -> int:
        """The rank to blame among ranks found failed in one poll: the first that raised (its log
        ends in a Python traceback), else the lowest. When one rank raises, its peers can die
        within the same poll of the lost connection (gloo aborts them: signal 6, no traceback)."""
        return next((r for r in failed if _TRACEBACK in self._rank_log(r)), failed[0])

    def _failure(self, rank, code):
        tb = traceback_tail(self._rank_log(rank))
        last = next((line for line in reversed(tb.splitlines()) if line.strip()), "")
        who = f"rank {rank}" if self.spec.distribution else "the job script"
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        reason = f"{who} {how}" + (f": {last.strip()}" if last else "")
        known = getattr(self.backend, "failure_reason", lambda _rank: None)(rank)  # e.g. Ray: "worker died: ..."
        reason = known or reason
        if "No module named 'braket" in last:
            reason += f" ({BRAKET_HINT})"
        if self.spec.distribution and self.spec.world_size > 1:
            reason += "; the other ranks were stopped"
        return "FAILED", reason, tb

    def _export(self) -> None:
        """Copy results and checkpoints where the job's output / checkpoint config asked (Braket's local paths)."""
        for key, sub in (("output_path", "results"), ("checkpoint_path", "checkpoints")):
            target = self.spec.extra.get(key)
            if target and (self.folder / sub).is_dir():
                dest = os.path.join(target, self.name) if key == "output_path" else target
                shutil.copytree(self.folder / sub, dest, dirs_exist_ok=True)

    def _finish(self, state, reason, tb, started) -> str:
        try:
            self._export()
        except OSError as err:
            if state == "COMPLETED":
                state, reason, tb = "FAILED", f"copying outputs failed: {err}", traceback.format_exc()
        finish = getattr(self.backend, "finish", None)  # e.g. Ray: bring results/checkpoints home
        if finish is not None:
            try:
                finish()
            except Exception as err:  # noqa: BLE001 - recorded, not raised
                if state == "COMPLETED":
                    state, reason, tb = "FAILED", f"collecting outputs failed: {err!r}", traceback.format_exc()
        ended = time.time()
        inst = instances.get_instance(self.spec.instance_type)
        billed = instances.ceil_seconds(ended - started)
        cost = instances.cost(billed, inst, self.spec.instance_count)
        summary = f"qhybrid: job {self.name} {state} after {ended - started:.2f} s"
        summary += f" (billed {billed} s x {self.spec.instance_count}, cost {instances.format_usd(cost)})"
        if reason:
            summary += f": {reason}"
        self.emit(summary)
        for f in (*self._rank_logs.values(), self._metrics, self._log):
            f.close()
        store.transition(
            self.name, state, from_states=("RUNNING", "QUEUED"), ended=ended,
            billed_seconds=billed, cost=cost, reason=reason, traceback=tb,
        )
        return store.get(self.name)["state"]

    def handle_signals(self) -> None:
        """Turn SIGTERM/SIGINT/SIGHUP into a clean stop (only in the detached process)."""

        def stop(signum, _frame):
            self._stop_signal = signum

        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, stop)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    sup = Supervisor(argv[0])
    sup.handle_signals()
    state = sup.run()
    return 0 if state == "COMPLETED" else 1


if __name__ == "__main__":
    sys.exit(main())
