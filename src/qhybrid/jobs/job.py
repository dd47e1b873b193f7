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
import time
from datetime import datetime, timezone
from pathlib import Path

from qhybrid.errors import JobError, PersistedDataError, QhybridError, SpecError
from qhybrid.jobs import contract, environment, instances, metrics, procs, store
from qhybrid.jobs.channels import COPY_IGNORE
from qhybrid.jobs.liveness import SUPERVISORS as _SUPERVISORS
from qhybrid.jobs.liveness import bill_to_heartbeat, check_alive, end_recorded
from qhybrid.jobs.spec import InstanceConfig, JobSpec, build_spec
from qhybrid.jobs.state import ACTIVE, TERMINAL, JobState, transition

_COPY_IGNORE = shutil.ignore_patterns(*COPY_IGNORE)


def _iso(t: float | None) -> str | None:
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="seconds") if t else None


def _populate(spec: JobSpec):
    def populate(folder: Path) -> None:
        src, source = Path(spec.source), folder / contract.SOURCE_DIR
        if src.is_file():
            shutil.copy2(src, source / src.name)
        else:
            shutil.copytree(src, source / src.name, ignore=_COPY_IGNORE)
        for channel, path in spec.input_data.items():
            p, dest = Path(path), folder / contract.INPUT_DIR / channel
            if p.is_dir():
                shutil.copytree(p, dest)
            else:
                dest.mkdir()
                shutil.copy2(p, dest / p.name)
        contract.write_atomic(folder / contract.HP_FILE, json.dumps(spec.hyperparameters))
        if spec.copy_checkpoints_from_job:
            earlier = store.job_dir(spec.copy_checkpoints_from_job) / contract.CHECKPOINT_DIR
            shutil.copytree(earlier, folder / contract.CHECKPOINT_DIR, dirs_exist_ok=True, symlinks=True,
                            ignore=lambda d, names: [n for n in names if os.path.islink(os.path.join(d, n))])
        call = spec.extra.get("call")
        if call:
            contract.write_atomic(source / contract.CALL_FILE, json.dumps(call))

    return populate


class Job:
    """A job in the store, by name. Create with ``Job.create``, find with ``Job.get`` / ``Job.list``."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"Job(name={self.name!r})"

    def _repr_html_(self) -> str:
        from qhybrid.jobs.display import job_html

        return job_html(self)

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
        force: bool = False,
        tags: dict | None = None,
        launch: str = "exec",
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
            force: submit even when the predicted cost exceeds ``max_cost`` (the job is still
                stopped when its running cost reaches it).
            tags: ``{str: str}`` stored with the job (``jobs show``, ``jobs list --tag``).
            launch: how the detached supervisor starts: ``"exec"``, a fresh interpreter (default),
                or ``"fork"``, a copy of this process, which saves an interpreter's start-up: for a
                plain single-purpose caller such as the ``qhybrid`` command, never one holding
                threads, locks or a GPU (``qhybrid.jobs.launch``; local backend, Linux only).

        Returns:
            The Job (already finished when ``in_process`` or ``wait_until_complete``).

        Raises:
            SpecError, InstanceError, DeviceError: bad input; nothing is written.
            BudgetError: the predicted cost exceeds ``max_cost`` (a SpecError); nothing is written.
        """
        if launch not in ("exec", "fork"):
            raise SpecError(f"launch={launch!r}: valid are 'exec', 'fork'")
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
        from qhybrid.estimate import jobs as estimates

        prediction = estimates.preflight(spec, force=force)  # BudgetError before anything is written
        spec = cls._reserve(spec, generated=job_name is None)
        job = cls(spec.name)
        if prediction is not None:
            estimates.write_prediction(job.folder, prediction)
        if in_process:
            environment.record(job.folder, source=source_module)
            from qhybrid.jobs.backends import inprocess
            from qhybrid.jobs.supervisor import Supervisor

            backend_ = inprocess.Backend()
            Supervisor(spec.name, backend=backend_).run()
            if backend_.interrupted:  # Ctrl-C belongs to the caller, after the job is recorded FAILED
                raise KeyboardInterrupt
            return job
        job._start_supervisor(launch=launch if spec.backend == "local" else "exec")
        # recorded while the job starts (its versions and git commits take a tenth of a second or more)
        environment.record(job.folder, source=source_module)
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

    def _start_supervisor(self, *, launch: str = "exec") -> None:
        from qhybrid.jobs import launch as launcher

        try:
            proc = launcher.start(self.name, mode=launch)
        except OSError as err:
            transition(self.name, JobState.FAILED, reason=f"could not start the supervisor: {err}")
            raise JobError(f"job {self.name!r}: could not start its supervisor: {err}") from None
        _SUPERVISORS[self.name] = proc
        started = procs.start_time(proc.pid) or "exited"  # already gone: never mistake a reused pid for it
        store.update(self.name, supervisor_pid=proc.pid, supervisor_start=started)

    @classmethod
    def estimate(cls, device: str, source_module, entry_point: str | None = None, hyperparameters: dict | None = None,
                 instance_config: InstanceConfig | None = None, distribution: str | None = None, *,
                 processes_per_instance: int | None = None, input_data=None, instances=None,
                 gpu: bool = False, cpu: bool = False):
        """Predict memory, time and cost of ``Job.create`` with these keywords, here and on instance types.

        Nothing is submitted or written (but the calibration and probe cache).

        Returns:
            A :class:`qhybrid.estimate.Estimate` (``.row("ml.m5.2xlarge").cost_usd``, ``render(est)``).

        Raises:
            SpecError, InstanceError, DeviceError: bad input, as ``Job.create`` would raise.
        """
        from qhybrid.estimate import estimate_job
        from qhybrid.estimate.jobs import kwargs_from_spec

        spec = build_spec(device=device, source_module=source_module, entry_point=entry_point, job_name=None,
                          hyperparameters=hyperparameters, input_data=input_data, instance_config=instance_config,
                          copy_checkpoints_from_job=None, distribution=distribution, max_runtime=None,
                          max_cost=None, backend="local", processes_per_instance=processes_per_instance,
                          in_process=False, extra=None, address=None)
        return estimate_job(kwargs_from_spec(spec), instances=instances, gpu=gpu, cpu=cpu)

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
            if row["state"] in ACTIVE:
                check_alive(row)
        jobs = [cls(r["name"]) for r in store.rows(state)]
        if tags:
            jobs = [j for j in jobs if _has_tags(j, tags)]
        return jobs

    # -- state ------------------------------------------------------------------
    def _row(self) -> dict:
        row = store.get(self.name)
        if row["state"] in ACTIVE:
            row = check_alive(row)
        return row

    @property
    def folder(self) -> Path:
        return store.job_dir(self.name)

    @property
    def arn(self) -> str:
        """The job's local ARN, ``local:job/<name>`` (accepted wherever a job name is)."""
        return f"local:job/{self.name}"

    def spec(self) -> JobSpec:
        """The job's spec. Raises JobError when its folder or spec.json is missing or damaged."""
        return store.load_spec(self.name)

    def state(self) -> JobState:
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
        log, offset, partial = self.folder / contract.LOGS_DIR / contract.JOB_LOG, 0, ""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            current = self.state()
            done = current in TERMINAL
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

    def result(self, timeout: float | None = None, *, allow_pickle: bool = False) -> dict:
        """Wait for the job and return its saved result (``{}`` if it saved none).

        Args:
            timeout: seconds to wait at most.
            allow_pickle: load a pickled result (``dataFormat: pickled_v4``), which runs code
                from the file; only for results you trust.

        Raises:
            JobError: if the job failed or was cancelled (with its reason).
            PersistedDataError: a pickled result without ``allow_pickle=True``; a truncated file.
        """
        self.wait(timeout=timeout)
        row = self._row()
        if row["state"] != JobState.COMPLETED:
            raise JobError(f"job {self.name!r} is {row['state']}: {row['reason'] or 'no reason recorded'}")
        path = self.folder / contract.RESULTS_DIR / contract.RESULTS_FILE
        try:
            doc = contract.load_document(path)
        except FileNotFoundError:
            return {}
        except PersistedDataError as err:
            raise PersistedDataError(f"job {self.name!r}: results.json is damaged: {err}") from None
        return contract.decode(doc, allow_pickle=allow_pickle, what=f"the result of job {self.name!r}")

    def metrics(self, metric_type: str = "timestamp", statistic: str = "max", rank: int = 0) -> dict:
        """Return the job's metrics as columns (Braket's ``metrics()``), rank 0's by default."""
        return metrics.columns(metrics.read_rows(self.folder / contract.METRICS_FILE), metric_type, statistic, rank)

    def logs(self) -> str:
        """Return the job's combined log so far."""
        path = self.folder / contract.LOGS_DIR / contract.JOB_LOG
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""

    def cancel(self, timeout: float = 10.0) -> str:
        """End the job's whole process tree; return its final state."""
        row = self._row()
        if row["state"] in TERMINAL:
            return row["state"]
        if self.folder.is_dir():
            (self.folder / contract.CANCEL_FILE).touch()
        store.update(self.name, cancel_requested=1)
        if transition(self.name, JobState.CANCELLED, from_states=(JobState.QUEUED,), reason="cancelled on request"):
            return JobState.CANCELLED
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.state() in TERMINAL:
                return self.state()
            time.sleep(0.05)
        row = store.get(self.name)  # the supervisor did not answer: end everything ourselves
        groups = store.processes(row)
        try:
            in_process = self.spec().in_process
        except JobError:
            in_process = False
        if not in_process:  # an in-process job's "supervisor" is the caller itself
            groups.insert(0, [row["supervisor_pid"], row["supervisor_start"]])
        procs.kill_groups(groups, grace=1.0)
        end_recorded(self.name)
        bill_to_heartbeat(row, JobState.CANCELLED, "cancelled on request (supervisor unresponsive)")
        return self.state()

    def describe(self) -> dict:
        """Return name, state, device, instance, times, bill, cost elsewhere and failure details.

        A damaged job (folder or spec.json missing or unreadable) is described from its index row,
        with ``damaged`` saying what is wrong (None for a sound job).
        """
        row = self._row()
        try:
            spec, damaged = self.spec(), None
        except JobError as err:
            spec, damaged = None, str(err)
        billed = row["billed_seconds"]
        if billed is None and row["started"] and row["state"] in ACTIVE:
            billed = instances.ceil_seconds(time.time() - row["started"])
        count = spec.instance_count if spec else (row["instance_count"] or 1)
        inst = spec.frozen_instance() if spec else None
        cost = row["cost"] if row["state"] in TERMINAL else None
        if cost is None and inst is not None and billed is not None:
            cost = instances.cost(billed, inst, count)
        measured = row["ended"] - row["started"] if row["ended"] and row["started"] else None
        versus = {"predicted": None, "measured_over_predicted": None, "measured_seconds_per_iteration": None,
                  "cost_on_other_instances_usd": {}, "cost_on_other_instances_basis": None}
        if spec is not None:
            from qhybrid.estimate.jobs import compare, read_prediction

            try:
                versus = compare(read_prediction(self.folder), instance_type=spec.instance_type,
                                 measured_seconds=measured, billed_seconds=billed, instance_count=count,
                                 folder=self.folder)
            except QhybridError:  # a broken price file never hides a job
                pass
        return {
            "name": self.name,
            "state": row["state"],
            "device": spec.device if spec else row["device"],
            "entry_point": spec.entry_point if spec else None,
            "instance_type": spec.instance_type if spec else row["instance_type"],
            "instance_count": count,
            "distribution": spec.distribution if spec else None,
            "world_size": spec.world_size if spec else None,
            "hyperparameters": spec.hyperparameters if spec else {},
            "created": _iso(row["created"]),
            "started": _iso(row["started"]),
            "ended": _iso(row["ended"]),
            "billed_seconds": billed,
            "price_usd_per_minute": inst.usd_per_minute if inst else None,
            "estimated_cost_usd": cost,
            "price_kind": inst.price_kind if inst else None,
            "predicted": versus["predicted"],
            "measured_seconds": measured,
            "measured_over_predicted": versus["measured_over_predicted"],
            "measured_seconds_per_iteration": versus["measured_seconds_per_iteration"],
            "cost_on_other_instances_usd": versus["cost_on_other_instances_usd"],
            "cost_on_other_instances_basis": versus["cost_on_other_instances_basis"],
            "tags": spec.tags if spec else {},
            "environment": _environment_of(spec) if spec else None,
            "failure_reason": row["reason"] if row["state"] != JobState.COMPLETED else None,
            "traceback_tail": row["traceback"],
            "folder": str(self.folder),
            "damaged": damaged,
        }

    def delete(self) -> None:
        """Remove a finished job from the store. Raises JobError if it still runs."""
        if self.state() in ACTIVE:
            raise JobError(f"job {self.name!r} is {self.state()}; cancel it before removing it")
        store.delete(self.name)


def _has_tags(job: "Job", tags: dict) -> bool:
    """True when the job carries every one of ``tags`` (a damaged job carries none)."""
    try:
        return tags.items() <= job.spec().tags.items()
    except JobError:
        return False


def _environment_of(spec: JobSpec) -> str | None:
    """The folder of the job's own dependency environment (None: the caller's interpreter)."""
    env = spec.extra.get("environment")
    if not env or spec.in_process or spec.backend != "local":  # those run in the caller's interpreter
        return None
    from qhybrid.jobs.environments import env_dir

    return str(env_dir(env["key"]))
