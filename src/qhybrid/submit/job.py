"""Job: submit a hybrid job, follow it, read what it left.

Example:
    >>> job = Job.create("local:qhybrid/qhybrid.cpu", "train.py",
    ...                  hyperparameters={"steps": 10})          # doctest: +SKIP
    >>> job.wait(stream=True).result()                           # doctest: +SKIP
"""
from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from qhybrid.errors import JobError, PersistedDataError, SpecError
from qhybrid.jobs import contract, environment, metrics, store
from qhybrid.jobs.cancel import cancel_job
from qhybrid.jobs.display import job_html
from qhybrid.jobs.launch import start_supervisor
from qhybrid.jobs.liveness import check_alive
from qhybrid.jobs.snapshot import populate
from qhybrid.jobs.spec import JobSpec
from qhybrid.jobs.state import ACTIVE, TERMINAL, JobState
from qhybrid.submit import budget
from qhybrid.submit.describe import describe
from qhybrid.submit.options import SubmitOptions
from qhybrid.submit.prepare import prepare


class Job:
    """A job in the store, by name. Create with ``Job.create``, find with ``Job.get`` / ``Job.list``."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"Job(name={self.name!r})"

    def _repr_html_(self) -> str:
        return job_html(self)

    def __eq__(self, other) -> bool:
        return isinstance(other, Job) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    # -- submission ---------------------------------------------------------
    @classmethod
    def create(cls, device: str | None, source_module, entry_point: str | None = None, *,
               options: SubmitOptions | None = None, **keywords) -> "Job":
        """Validate, snapshot and start a job (Braket's ``AwsQuantumJob.create`` keywords).

        Args:
            device: ``local:<provider>/<name>``, e.g. ``local:qhybrid/qhybrid.cpu``.
            source_module: a ``.py`` file or a package folder, snapshotted now.
            entry_point: ``pkg.module`` (run as ``__main__``) or ``pkg.module:function``;
                default: the file's or folder's name.
            options: a :class:`~qhybrid.submit.options.SubmitOptions`; ``keywords`` (its field
                names: ``job_name``, ``hyperparameters``, ``input_data``, ``instance_config``,
                ``max_runtime``, ``max_cost``, ``backend``, ``tags``, ...) are applied over it.

        Returns:
            The Job (already finished when ``in_process`` or ``wait_until_complete``).

        Raises:
            SpecError, InstanceError, DeviceError: bad input; nothing is written.
            BudgetError: the predicted cost exceeds ``max_cost`` (a SpecError); nothing is written.
        """
        opts = SubmitOptions.of(options, **keywords)
        spec, target = prepare(device=device, source_module=source_module, entry_point=entry_point, options=opts)
        prediction = budget.check(spec, target, force=opts.force)  # BudgetError before anything is written
        spec = cls._reserve(spec, generated=opts.job_name is None)
        job = cls(spec.name)
        if prediction is not None:
            budget.write_prediction(job.folder, prediction)
        if opts.in_process:
            # start-up: the supervisor's modules load only here; a detached one pays for them in its child
            from qhybrid.jobs.backends import inprocess

            environment.record(job.folder, source=source_module)
            inprocess.run_job(spec.name)
            return job
        start_supervisor(spec.name, mode=opts.launch if spec.backend == "local" else "exec")
        # recorded while the job starts (its versions and git commits take a tenth of a second or more)
        environment.record(job.folder, source=source_module)
        if opts.wait_until_complete:
            job.wait(stream=True)
        return job

    @staticmethod
    def _reserve(spec: JobSpec, *, generated: bool) -> JobSpec:
        for attempt in range(20):
            try:
                store.create(spec, populate(spec))
                return spec
            except SpecError:
                if not generated or attempt == 19:
                    raise
                base = spec.name.rsplit("-r", 1)[0] if attempt else spec.name
                spec = replace(spec, name=f"{base[:46]}-r{attempt + 1}")
        raise AssertionError("unreachable")

    @classmethod
    def estimate(cls, device: str, source_module, entry_point: str | None = None, *, instances=None,
                 gpu: bool = False, cpu: bool = False, options: SubmitOptions | None = None, **keywords):
        """Predict memory, time and cost of ``Job.create`` with these keywords, here and on instance types.

        Nothing is submitted or written (but the calibration and probe cache).

        Returns:
            A :class:`qhybrid.estimate.Estimate` (``.row("ml.m5.2xlarge").cost_usd``, ``render(est)``).

        Raises:
            SpecError, InstanceError, DeviceError: bad input, as ``Job.create`` would raise.
        """
        opts = replace(SubmitOptions.of(options, **keywords), job_name=None, max_cost=None, max_runtime=None,
                       copy_checkpoints_from_job=None, backend="local", in_process=False, address=None, extra={})
        spec, target = prepare(device=device, source_module=source_module, entry_point=entry_point, options=opts)
        return budget.predict(spec, target, instances=instances, gpu=gpu, cpu=cpu)

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
        """End the job's whole process tree; return its final state (``qhybrid.jobs.cancel``)."""
        return cancel_job(self.name, timeout=timeout)

    def describe(self) -> dict:
        """Return name, state, device, instance, times, bill, cost elsewhere and failure details
        (:func:`qhybrid.submit.describe.describe`)."""
        return describe(self)

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
