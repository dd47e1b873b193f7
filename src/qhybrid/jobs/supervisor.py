"""The supervisor: one per job; owns its state transitions, logs, metrics, limits and cancellation.

Started detached (``python -m qhybrid.jobs.supervisor NAME`` in its own
session) so the job outlives its caller, or called in-process
(``Supervisor(name, backend=inprocess.Backend()).run()``): the same code path.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import threading
import time
import traceback

from qhybrid.jobs import contract, environments, instances, limits, procs, store
from qhybrid.jobs.backends import ProcessSpec, get_backend
from qhybrid.jobs.descendants import end_recorded, read_descendants  # noqa: F401  (end_recorded: re-exported)
from qhybrid.jobs.environments import EnvironmentBuildError, EnvironmentStopped
from qhybrid.jobs.joboutput import JobOutput
from qhybrid.jobs.rankenv import Rendezvous, free_port, job_env, runner_argv  # noqa: F401  (free_port: re-exported)
from qhybrid.jobs.spec import JobSpec
from qhybrid.jobs.state import ACTIVE, JobState, transition
from qhybrid.jobs.watchdog import Watchdog

POLL_S = 0.05
HEARTBEAT_S = 1.0
RECORD_S = 0.5  # how often the descendants record is refreshed
FLUSH_S = 0.2  # logs and metrics are buffered and written out this often (and at the end)
TB_LINES = 25
_TRACEBACK = "Traceback (most recent call last)"
INSTALLING = "installing requirements"  # the phase of a RUNNING job whose environment is being built
BRAKET_HINT = "the script imports the Braket SDK, which is not installed: pip install 'qhybrid[braket]'"


def load_spec(name: str) -> JobSpec:
    return store.load_spec(name)


def traceback_tail(text: str, limit: int = TB_LINES) -> str:
    """Return the last traceback in ``text`` (at most ``limit`` lines), else its last lines."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(_TRACEBACK)]
    tail = lines[starts[-1]:] if starts else lines[-10:]
    return "\n".join(tail[-limit:])


class Supervisor(JobOutput):
    """Runs one QUEUED job to a terminal state.

    Args:
        name: the job's name (its folder and row must exist).
        backend: a backend instance; default from the spec (``local``).
        detached: True in the job's own supervisor process (``main``): it is then the child
            subreaper of the job's processes and ends every descendant when the job ends.
    """

    def __init__(self, name: str, *, backend=None, detached: bool = False):
        self.name = name
        self.folder = store.job_dir(name)
        self.spec = load_spec(name)
        self.backend = backend or get_backend(self.spec.backend)
        self.detached = detached
        self._lock = threading.Lock()
        self._log = None
        self._rank_logs: dict[int, object] = {}
        self._metrics = None
        self._stop_signal = None
        self._rendezvous = None
        self._recorded: list = []
        self._stopped_at: float | None = None
        self._left = 0
        self._dog: Watchdog | None = None  # ends the job's processes if this supervisor is killed
        self._beat = 0.0  # the last heartbeat written while the environment was built
        self._rank_ended: float | None = None  # when the first rank of a data-parallel job ended
        self._io_error: OSError | None = None  # the first failed write of a log or metrics (a full disk)

    @property
    def _owns_tree(self) -> bool:
        return self.detached and self.backend.local

    @property
    def _spare(self) -> tuple:
        return (self._dog.pid,) if self._dog else ()

    # -- lifecycle ----------------------------------------------------------
    def processes(self, python: str | None = None) -> list[ProcessSpec]:
        spec = self.spec
        port, extra = None, {}
        if spec.distribution:
            if self.backend.local and spec.world_size > 1:
                self._rendezvous = Rendezvous()
                port, extra = self._rendezvous.port, self._rendezvous.env
            else:
                port = free_port()
        source = self.folder / contract.SOURCE_DIR
        argv = [*runner_argv(python), str(source), spec.entry_point]
        if spec.extra.get("call"):
            argv.append(str(source / contract.CALL_FILE))
        return [
            ProcessSpec(rank=r, argv=argv, cwd=str(source),
                        env={**job_env(spec, rank=r, port=port, loopback=self.backend.local), **extra})
            for r in range(spec.world_size)
        ]

    def run(self) -> str:
        """Run the job; return its final state. Never raises for the job's own failure."""
        row = store.get(self.name)
        if row["state"] != JobState.QUEUED:
            return row["state"]
        store.update(self.name, supervisor_pid=os.getpid(), supervisor_start=procs.start_time(os.getpid()))
        logs = self.folder / contract.LOGS_DIR
        self._log = self._open(logs / contract.JOB_LOG)
        self._metrics = self._open(self.folder / contract.METRICS_FILE)
        if self._owns_tree:
            self._dog = Watchdog(self.folder / contract.DESCENDANTS_FILE)
        started = python = None
        try:
            if self._builds_environment():  # a phase of the job: RUNNING, inside its limits
                started = time.time()
                if not self._begin(started, phase=INSTALLING):
                    return store.get(self.name)["state"]
                python = self._environment(started)
                store.update(self.name, phase=None)
            else:
                self._environment(None)
            specs = self.processes(python)
            for p in specs:
                self._rank_logs[p.rank] = self._open(logs / contract.rank_log(p.rank))
            self.backend.prepare(specs, self.on_line,
                                 lambda: (self.folder / contract.CANCEL_FILE).exists() or bool(self._stop_signal))
            if started is None:
                started = time.time()
                if not self._begin(started):
                    return store.get(self.name)["state"]
            spec = self.spec
            self.emit(
                f"qhybrid: job {spec.name} running {spec.entry_point} on {spec.device}, "
                f"{spec.instance_count} x {spec.instance_type}, {len(specs)} process(es)"
            )
            state, reason, tb = self._watch(specs, started)
        except EnvironmentStopped as err:  # cancelled, or a limit reached, while pip ran (pip is ended)
            self._stopped_at = time.time()
            cancelled = (self.folder / contract.CANCEL_FILE).exists()
            state, reason, tb = (JobState.CANCELLED if cancelled else JobState.FAILED), err.reason, None
        except EnvironmentBuildError as err:  # the job's requirements: pip's message, no script ran
            state, reason, tb = JobState.FAILED, f"installing the job's requirements failed: {err}", None
            started = started or time.time()
        except BaseException as err:  # the supervisor's own failure
            self.backend.kill(grace=1.0)
            state, reason, tb = JobState.FAILED, f"supervisor error: {err!r}", traceback.format_exc()
            started = started or store.get(self.name)["started"] or time.time()
        return self._finish(state, reason, tb, started)

    def _record_tree(self) -> None:
        """Keep ``descendants.json`` (every process of the job, for whoever finds us dead) up to date."""
        if not self._owns_tree:
            return
        found = procs.descendants(spare=self._spare)
        if found != self._recorded:
            self._recorded = found
            known = {p for p, _s in found}
            old = [x for x in read_descendants(self.folder) if x[0] not in known and procs.alive(*x)]
            contract.write_atomic(self.folder / contract.DESCENDANTS_FILE, json.dumps(found + old))

    def _begin(self, started: float, *, phase: str | None = None) -> bool:
        """QUEUED -> RUNNING (billing from ``started``); False when the job was cancelled first."""
        if transition(self.name, JobState.RUNNING, started=started, heartbeat=started, phase=phase):
            return True
        self._close()
        return False

    def _builds_environment(self) -> bool:
        return bool(self.spec.extra.get("environment")) and not self.spec.in_process and self.spec.backend == "local"

    def _environment(self, started: float | None) -> str | None:
        """Build (or reuse) the job's own environment when its source has requirements; its python.
        The build is stopped like the script: cancel, a stop signal, max_runtime and the budget."""
        env = self.spec.extra.get("environment")
        if not env:
            return None
        if not self._builds_environment():
            where = "in-process jobs" if self.spec.in_process else f"the {self.spec.backend} backend"
            self.emit(f"qhybrid: requirements.txt not installed: {where} use the caller's interpreter")
            return None
        self.emit(f"qhybrid: job {self.name} {INSTALLING}")
        python = environments.ensure(env["requirements"], env_key=env["key"], log=self.emit,
                                     constraints=env.get("constraints"),
                                     stop=lambda: self._stop_building(started),
                                     watch=self._dog.watch if self._dog else None)
        return str(python)

    def _stop_building(self, started: float) -> str | None:
        """Polled while pip runs: why the build must stop now, or None (and the heartbeat kept)."""
        now = time.time()
        if now - self._beat >= HEARTBEAT_S:
            store.update(self.name, heartbeat=now)
            self._beat = now
        return limits.building_stop(self.spec, self.folder, started=started, now=now,
                                    stop_signal=self._stop_signal, poll_s=POLL_S)

    def _watch(self, specs, started):
        spec = self.spec
        inst = spec.frozen_instance()
        self.backend.launch(specs, self.on_line)
        if self._dog:
            self._dog.watch(self.backend.groups())
        store.update(self.name, processes=json.dumps(self.backend.groups()))
        self._record_tree()
        cancel_file = self.folder / contract.CANCEL_FILE
        budget_s = spec.budget_seconds()
        max_runtime, grace = limits.max_runtime(spec), limits.rank_grace()
        beat = record = flushed = time.monotonic()
        while True:
            codes = self.backend.poll()
            failed = sorted(r for r, c in codes.items() if c not in (None, 0))
            now = time.time()
            elapsed = now - started
            if time.monotonic() - record >= RECORD_S:
                self._record_tree()
                record = time.monotonic()
            if time.monotonic() - beat >= HEARTBEAT_S:
                store.update(self.name, heartbeat=now)
                beat = time.monotonic()
            if time.monotonic() - flushed >= FLUSH_S or self._io_error:
                flushed = time.monotonic()
                if self._flush() is not None:
                    return self._unwritable()
            if failed:
                self.backend.kill()
                self.end_tree()
                self.backend.drain()
                if self._flush() is not None:
                    return self._unwritable()
                rank = self._cause(failed)
                return self._failure(rank, codes[rank])
            if codes and all(c == 0 for c in codes.values()):
                self.end_tree()  # what the script left running would hold its output open
                self.backend.drain()
                return JobState.COMPLETED, None, None
            if self._rank_ended is None and any(c == 0 for c in codes.values()):
                self._rank_ended = now  # one rank is done: the others have ``grace`` seconds left
            if self._rank_ended is not None and now - self._rank_ended > grace:
                self._stopped_at = now
                self.backend.kill(grace=1.0)
                self.end_tree()
                return JobState.FAILED, limits.hung(codes, grace), None
            if cancel_file.exists():
                self._stopped_at = now
                self.backend.kill()
                return JobState.CANCELLED, "cancelled on request", None
            if self._stop_signal:
                self._stopped_at = now
                self.backend.kill(grace=1.0)
                return JobState.FAILED, f"supervisor stopped by signal {self._stop_signal}", None
            if elapsed > max_runtime:
                self._stopped_at = now
                self.backend.kill()
                return JobState.FAILED, f"max_runtime of {max_runtime:g} s exceeded", None
            # the bill rounds up to whole seconds: stop while the rounded bill still fits the budget
            if budget_s is not None and elapsed >= budget_s - 4 * POLL_S:
                self._stopped_at = min(now, started + budget_s)
                self.backend.kill()
                spent = instances.cost(instances.ceil_seconds(self._stopped_at - started), inst, spec.instance_count)
                return (JobState.FAILED, f"max_cost of ${spec.max_cost:g} reached "
                        f"(billed ${spent:.6f} for {instances.ceil_seconds(self._stopped_at - started)} s)", None)
            time.sleep(POLL_S)

    def _unwritable(self):
        """End a job whose log or metrics can no longer be written (a full disk): FAILED, with why."""
        self._stopped_at = time.time()
        self.backend.kill(grace=1.0)
        self.end_tree()
        self.backend.drain(timeout=1.0)
        return JobState.FAILED, limits.unwritable(self._io_error, store.home()), None

    def _rank_log(self, rank) -> str:
        return (self.folder / contract.LOGS_DIR / contract.rank_log(rank)).read_text(encoding="utf-8", errors="replace")

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
        reason = self.backend.failure_reason(rank) or reason  # e.g. Ray: "worker died: ..."
        if "No module named 'braket" in last:
            reason += f" ({BRAKET_HINT})"
        if self.spec.distribution and self.spec.world_size > 1:
            reason += "; the other ranks were stopped"
        return JobState.FAILED, reason, tb

    def end_tree(self) -> int:
        """End every process the job left behind (children that setsid, ignore SIGTERM, or outlive
        a script that exited 0); return how many there were."""
        if not self._owns_tree:
            return 0
        keep = [p for p, _s in self.backend.groups() if p]
        self._left += procs.end_descendants(grace=1.0, keep=keep, spare=self._spare)
        (self.folder / contract.DESCENDANTS_FILE).unlink(missing_ok=True)
        return self._left

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
            if state == JobState.COMPLETED:
                state, reason, tb = JobState.FAILED, f"copying outputs failed: {err}", traceback.format_exc()
        try:
            self.backend.finish()  # e.g. Ray: bring results/checkpoints home
        except Exception as err:  # noqa: BLE001 - recorded, not raised
            if state == JobState.COMPLETED:
                state, reason, tb = JobState.FAILED, f"collecting outputs failed: {err!r}", traceback.format_exc()
        left = self.end_tree()
        self.backend.drain(timeout=1.0)  # what the ended processes printed last is recorded (cancel, limits)
        if self._dog:
            self._dog.close()
            self._dog = None
        ended = time.time()
        billed_until = self._stopped_at or ended
        inst = self.spec.frozen_instance()
        billed = instances.ceil_seconds(billed_until - started)
        cost = instances.cost(billed, inst, self.spec.instance_count)
        summary = f"qhybrid: job {self.name} {state} after {ended - started:.2f} s"
        summary += f" (billed {billed} s x {self.spec.instance_count}, cost {instances.format_usd(cost)})"
        if reason:
            summary += f": {reason}"
        if left:
            summary += f"; ended {left} process(es) it left behind"
        self.emit(summary)
        self._close()
        transition(self.name, state, from_states=ACTIVE, ended=ended, billed_seconds=billed, cost=cost,
                   reason=reason, traceback=tb, phase=None)
        return store.get(self.name)["state"]

    def handle_signals(self) -> None:
        """Turn SIGTERM/SIGINT/SIGHUP into a clean stop (only in the detached process)."""

        def stop(signum, _frame):
            self._stop_signal = signum

        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, stop)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    os.umask(0o077)  # everything the job writes is private (0600 files, 0700 folders)
    procs.become_subreaper()
    sup = Supervisor(argv[0], detached=True)
    sup.handle_signals()
    try:
        state = sup.run()
    finally:
        sup.end_tree()
    return 0 if state == JobState.COMPLETED else 1


if __name__ == "__main__":
    sys.exit(main())
