"""Job: submit a hybrid job, follow it, read what it left.

Example:
    >>> job = Job.create("local:qhybrid/qhybrid.cpu", "train.py",
    ...                  hyperparameters={"steps": 10})          # doctest: +SKIP
    >>> job.wait(stream=True).result()                           # doctest: +SKIP
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from qhybrid.errors import JobError, SpecError
from qhybrid.jobs import instances, metrics, procs, store
from qhybrid.jobs.script import read_persisted
from qhybrid.jobs.spec import InstanceConfig, JobSpec, build_spec

_SUPERVISORS: dict[str, subprocess.Popen] = {}  # reaped when looked at, so none stays a zombie
_NO_PID_GRACE_S = 30.0
_COPY_IGNORE = shutil.ignore_patterns("__pycache__", ".git", ".venv", "*.pyc", ".pytest_cache", "qhybrid-local")


def _iso(t: float | None) -> str | None:
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="seconds") if t else None


def _populate(spec: JobSpec):
    def populate(folder: Path) -> None:
        src = Path(spec.source)
        if src.is_file():
            shutil.copy2(src, folder / "source" / src.name)
        else:
            shutil.copytree(src, folder / "source" / src.name, ignore=_COPY_IGNORE)
        for channel, path in spec.input_data.items():
            p, dest = Path(path), folder / "input" / channel
            if p.is_dir():
                shutil.copytree(p, dest, ignore=_COPY_IGNORE)
            else:
                dest.mkdir()
                shutil.copy2(p, dest / p.name)
        (folder / "hyperparameters.json").write_text(json.dumps(spec.hyperparameters), encoding="utf-8")
        if spec.copy_checkpoints_from_job:
            earlier = store.job_dir(spec.copy_checkpoints_from_job) / "checkpoints"
            shutil.copytree(earlier, folder / "checkpoints", dirs_exist_ok=True)
        call = spec.extra.get("call")
        if call:
            (folder / "source" / "_qhybrid_call.json").write_text(json.dumps(call), encoding="utf-8")

    return populate


class Job:
    """A job in the store, by name. Create with ``Job.create``, find with ``Job.get`` / ``Job.list``."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"Job(name={self.name!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Job) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    # -- submission ---------------------------------------------------------
    @classmethod
    def create(
        cls,
        device: str,
        source_module,
        entry_point: str | None = None,
        job_name: str | None = None,
        hyperparameters: dict | None = None,
        input_data=None,
        instance_config: InstanceConfig | None = None,
        copy_checkpoints_from_job: str | None = None,
        distribution: str | None = None,
        max_runtime: float | None = None,
        max_cost: float | None = None,
        wait_until_complete: bool = False,
        backend: str = "local",
        *,
        processes_per_instance: int | None = None,
        in_process: bool = False,
        address: str | None = None,
        tags: dict | None = None,
        _extra: dict | None = None,
    ) -> "Job":
        """Validate, snapshot and start a job (Braket's ``AwsQuantumJob.create`` keywords).

        Args:
            device: ``local:<provider>/<name>``, e.g. ``local:qhybrid/qhybrid.cpu``.
            source_module: a ``.py`` file or a package folder, snapshotted now.
            entry_point: ``pkg.module`` (run as ``__main__``) or ``pkg.module:function``;
                default: the file's or folder's name.
            job_name: letters, digits, hyphens, <= 50 chars, unique; generated if None.
            hyperparameters: JSON-serializable dict; the script sees string values.
            input_data: a path (channel ``input``) or ``{channel: path}``.
            instance_config: an InstanceConfig (default ml.m5.large x 1).
            copy_checkpoints_from_job: name of an earlier job whose checkpoints are copied in.
            distribution: None or ``"data_parallel"``.
            max_runtime: seconds before the job is stopped (FAILED).
            max_cost: USD; the job is stopped (FAILED) when its estimated cost reaches it.
            wait_until_complete: wait for the end (streaming logs) before returning.
            backend: ``"local"`` (``"ray"`` when installed).
            processes_per_instance: data-parallel processes per instance on CPU (default 1).
            in_process: run the script in this interpreter (tests, debugging); returns when done.
            address: with ``backend="ray"``, the Ray cluster (``HOST:PORT``, ``auto``,
                ``ray://HOST:10001``); None: ``$QHYBRID_RAY_ADDRESS``, ``$RAY_ADDRESS``,
                else a local cluster on 127.0.0.1 (docs/ray.md).
            tags: ``{str: str}`` stored with the job (``jobs show``, ``jobs list --tag``).

        Returns:
            The Job (already finished when ``in_process`` or ``wait_until_complete``).

        Raises:
            SpecError, InstanceError, DeviceError: bad input; nothing is written.
        """
        spec = build_spec(
            device=device, source_module=source_module, entry_point=entry_point, job_name=job_name,
            hyperparameters=hyperparameters, input_data=input_data, instance_config=instance_config,
            copy_checkpoints_from_job=copy_checkpoints_from_job, distribution=distribution,
            max_runtime=max_runtime, max_cost=max_cost, backend=backend,
            processes_per_instance=processes_per_instance, in_process=in_process, extra=_extra,
            address=address, tags=tags,
        )
        if spec.copy_checkpoints_from_job and not store.job_dir(spec.copy_checkpoints_from_job).is_dir():
            raise SpecError(f"copy_checkpoints_from_job: no job named {spec.copy_checkpoints_from_job!r}")
        if spec.backend == "ray" and not in_process:
            from qhybrid.jobs.backends.ray import check_submission

            check_submission(spec)  # ClusterError now (unreachable, can never fit), before anything is written
        spec = cls._reserve(spec, generated=job_name is None)
        job = cls(spec.name)
        if in_process:
            from qhybrid.jobs.backends import inprocess
            from qhybrid.jobs.supervisor import Supervisor

            backend_ = inprocess.Backend()
            Supervisor(spec.name, backend=backend_).run()
            if backend_.interrupted:  # Ctrl-C belongs to the caller, after the job is recorded FAILED
                raise KeyboardInterrupt
            return job
        job._start_supervisor()
        if wait_until_complete:
            job.wait(stream=True)
        return job

    @staticmethod
    def _reserve(spec: JobSpec, *, generated: bool) -> JobSpec:
        for attempt in range(20):
            try:
                store.create(spec, _populate(spec))
                return spec
            except SpecError:
                if not generated or attempt == 19:
                    raise
                from dataclasses import replace

                base = spec.name.rsplit("-r", 1)[0] if attempt else spec.name
                spec = replace(spec, name=f"{base[:46]}-r{attempt + 1}")
        raise AssertionError("unreachable")

    def _start_supervisor(self) -> None:
        folder = store.job_dir(self.name)
        env = {**os.environ, "QHYBRID_HOME": str(store.home())}
        try:
            with open(folder / "logs" / "supervisor.log", "ab") as out:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "qhybrid.jobs.supervisor", self.name],
                    cwd=str(folder), env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                    start_new_session=True, close_fds=True,
                )
        except OSError as err:
            store.transition(self.name, "FAILED", reason=f"could not start the supervisor: {err}")
            raise JobError(f"job {self.name!r}: could not start its supervisor: {err}") from None
        _SUPERVISORS[self.name] = proc
        started = procs.start_time(proc.pid) or "exited"  # already gone: never mistake a reused pid for it
        store.update(self.name, supervisor_pid=proc.pid, supervisor_start=started)

    # -- lookup ---------------------------------------------------------------
    @classmethod
    def get(cls, name: str) -> "Job":
        """Return the job named ``name``. Raises JobNotFoundError."""
        store.get(name)
        return cls(name)

    @classmethod
    def list(cls, state: str | None = None, *, tags: dict | None = None) -> list["Job"]:
        """Return every job (oldest first), optionally only those in ``state`` carrying all ``tags``."""
        for row in store.rows():
            if row["state"] in store.ACTIVE:
                _check_alive(row)
        jobs = [cls(r["name"]) for r in store.rows(state)]
        if tags:
            jobs = [j for j in jobs if (j.folder / "spec.json").is_file() and tags.items() <= j.spec().tags.items()]
        return jobs

    # -- state ------------------------------------------------------------------
    def _row(self) -> dict:
        row = store.get(self.name)
        if row["state"] in store.ACTIVE:
            row = _check_alive(row)
        return row

    @property
    def folder(self) -> Path:
        return store.job_dir(self.name)

    @property
    def arn(self) -> str:
        """The job's local ARN, ``local:job/<name>`` (accepted wherever a job name is)."""
        return f"local:job/{self.name}"

    def spec(self) -> JobSpec:
        return JobSpec.from_json((self.folder / "spec.json").read_text(encoding="utf-8"))

    def state(self) -> str:
        """Return QUEUED, RUNNING, COMPLETED, FAILED or CANCELLED."""
        return self._row()["state"]

    def wait(self, timeout: float | None = None, stream=None, poll: float = 0.1, *, on_poll=None) -> "Job":
        """Wait until the job ends, optionally streaming its log lines.

        Args:
            timeout: seconds to wait at most (None: no limit).
            stream: a callable receiving each log line, or True to print them.
            poll: seconds between looks.
            on_poll: optional callable receiving the state at each look (status lines).

        Returns:
            The job itself (so ``job.wait().result()`` chains).

        Raises:
            JobError: when ``timeout`` passes first.
        """
        sink = (lambda line: print(line, flush=True)) if stream is True else stream
        log, offset, partial = self.folder / "logs" / "job.log", 0, ""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            current = self.state()
            done = current in store.TERMINAL
            if sink and log.exists():
                with open(log, encoding="utf-8", errors="replace") as f:
                    f.seek(offset)
                    chunk = f.read()
                    offset = f.tell()
                lines = (partial + chunk).split("\n")
                partial = lines.pop()
                for line in lines:
                    sink(line)
            if on_poll is not None:
                on_poll(current)
            if done:
                if sink and partial:
                    sink(partial)
                return self
            if deadline is not None and time.monotonic() > deadline:
                raise JobError(f"job {self.name!r} is still {self.state()} after waiting {timeout:g} s")
            time.sleep(poll)

    def result(self, timeout: float | None = None, *, allow_pickle: bool = True) -> dict:
        """Wait for the job and return its saved result (``{}`` if it saved none).

        Raises:
            JobError: if the job failed or was cancelled (with its reason).
            RuntimeError: when the result is pickled and ``allow_pickle`` is False.
        """
        self.wait(timeout=timeout)
        row = self._row()
        if row["state"] != "COMPLETED":
            raise JobError(f"job {self.name!r} is {row['state']}: {row['reason'] or 'no reason recorded'}")
        path = self.folder / "results" / "results.json"
        return read_persisted(path, allow_pickle=allow_pickle) if path.exists() else {}

    def metrics(self, metric_type: str = "timestamp", statistic: str = "max", rank: int = 0) -> dict:
        """Return the job's metrics as columns (Braket's ``metrics()``), rank 0's by default."""
        return metrics.columns(metrics.read_rows(self.folder / "metrics.jsonl"), metric_type, statistic, rank)

    def logs(self) -> str:
        """Return the job's combined log so far."""
        path = self.folder / "logs" / "job.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""

    def cancel(self, timeout: float = 10.0) -> str:
        """End the job's whole process tree; return its final state."""
        row = self._row()
        if row["state"] in store.TERMINAL:
            return row["state"]
        (self.folder / "cancel").touch()
        store.update(self.name, cancel_requested=1)
        if store.transition(self.name, "CANCELLED", from_states=("QUEUED",), reason="cancelled on request"):
            return "CANCELLED"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.state() in store.TERMINAL:
                return self.state()
            time.sleep(0.05)
        row = store.get(self.name)  # the supervisor did not answer: end everything ourselves
        groups = store.processes(row)
        if not self.spec().in_process:  # an in-process job's "supervisor" is the caller itself
            groups.insert(0, [row["supervisor_pid"], row["supervisor_start"]])
        procs.kill_groups(groups, grace=1.0)
        store.transition(self.name, "CANCELLED", reason="cancelled on request (supervisor unresponsive)")
        return self.state()

    def describe(self) -> dict:
        """Return name, state, device, instance, times, bill, cost elsewhere and failure details."""
        row, spec = self._row(), self.spec()
        inst = instances.get_instance(spec.instance_type)
        billed = row["billed_seconds"]
        if billed is None and row["started"]:
            billed = instances.ceil_seconds(time.time() - row["started"])
        cost = instances.cost(billed, inst, spec.instance_count) if billed is not None else None
        return {
            "name": self.name,
            "state": row["state"],
            "device": spec.device,
            "entry_point": spec.entry_point,
            "instance_type": spec.instance_type,
            "instance_count": spec.instance_count,
            "distribution": spec.distribution,
            "world_size": spec.world_size,
            "hyperparameters": spec.hyperparameters,
            "created": _iso(row["created"]),
            "started": _iso(row["started"]),
            "ended": _iso(row["ended"]),
            "billed_seconds": billed,
            "price_usd_per_minute": inst.usd_per_minute,
            "estimated_cost_usd": cost,
            "cost_on_other_instances_usd": {
                k: v for k, v in instances.costs_elsewhere(billed or 0, spec.instance_count).items()
                if k != spec.instance_type
            } if billed else {},
            "tags": spec.tags,
            "environment": _environment_of(spec),
            "failure_reason": row["reason"] if row["state"] != "COMPLETED" else None,
            "traceback_tail": row["traceback"],
            "folder": str(self.folder),
        }

    def delete(self) -> None:
        """Remove a finished job from the store. Raises JobError if it still runs."""
        if self.state() in store.ACTIVE:
            raise JobError(f"job {self.name!r} is {self.state()}; cancel it before removing it")
        store.delete(self.name)


def _environment_of(spec: JobSpec) -> str | None:
    """The folder of the job's own dependency environment (None: the caller's interpreter)."""
    env = spec.extra.get("environment")
    if not env or spec.in_process or spec.backend != "local":  # those run in the caller's interpreter
        return None
    from qhybrid.jobs.environments import env_dir

    return str(env_dir(env["key"]))


def _check_alive(row: dict) -> dict:
    """Mark an active job whose supervisor is gone FAILED (and end its processes); return the row."""
    name = row["name"]
    proc = _SUPERVISORS.get(name)
    if proc is not None and proc.poll() is not None:
        _SUPERVISORS.pop(name, None)
    pid, started = row["supervisor_pid"], row["supervisor_start"]
    if pid is None:
        if time.time() - (row["created"] or 0) < _NO_PID_GRACE_S:
            return row
    elif procs.alive(pid, started):
        return row
    fresh = store.get(name)
    if fresh["state"] not in store.ACTIVE:  # it finished while we looked
        return fresh
    procs.kill_groups(store.processes(fresh), grace=1.0)
    reason = f"the job's supervisor (pid {pid}) died; its processes were stopped"
    sup_log = store.job_dir(name) / "logs" / "supervisor.log"
    last = sup_log.read_text(errors="replace").strip().splitlines()[-1:] if sup_log.exists() else []
    if last:
        reason += f" (supervisor's last words: {last[0][:200]})"
    store.transition(name, "FAILED", reason=reason)
    return store.get(name)
