"""``AwsQuantumJob`` and ``LocalQuantumJob``: Braket's job classes over ``qhybrid.Job``, run locally.

``create`` takes every keyword of the Braket SDK's ``create``. Those with a local
meaning are honoured (``stopping_condition``: max runtime; ``tags``;
``checkpoint_config.localPath`` and a local ``output_data_config.s3Path``:
checkpoints and results copied there when the job ends; ``quiet``; ``logger``);
those that only mean something on AWS (``image_uri``, ``role_arn``,
``code_location``, ``aws_session``, ``reservation_arn``,
``local_container_update``, S3 locations) are recorded in the job's spec and
named in one notice line. ``LocalQuantumJob.create`` blocks and streams the
log, as Braket's does.

Example:
    >>> job = AwsQuantumJob.create(device="local:pennylane/lightning.qubit",
    ...                            source_module="qaoa", entry_point="qaoa.qaoa_algorithm",
    ...                            hyperparameters={"p": 2})               # doctest: +SKIP
    >>> job.result()                                                        # doctest: +SKIP
"""
from __future__ import annotations

import logging
import os
import shutil
import time
from pathlib import Path
from typing import Any

from qhybrid.braket import config as cfg
from qhybrid.errors import JobError, SpecError
from qhybrid.jobs import store
from qhybrid.submit.job import Job
from qhybrid.jobs.spec import job_ref_name

DEFAULT_RESULTS_POLL_TIMEOUT = 10 * 24 * 60 * 60
DEFAULT_RESULTS_POLL_INTERVAL = 5
_LOCAL_POLL_S = 0.1  # local state is cheap to read: look often, at most poll_interval_seconds apart
_AWS_ONLY = ("image_uri", "role_arn", "code_location", "aws_session", "reservation_arn", "local_container_update")
_LOGGER = logging.getLogger("qhybrid.braket")


def _is_s3(value) -> bool:
    return isinstance(value, str) and value.startswith("s3://")


def _local_input(input_data):
    """Refuse S3 input (a local job cannot read it); pass local paths through."""
    items = input_data.items() if isinstance(input_data, dict) else [("input", input_data)]
    for channel, data in items:
        if _is_s3(data) or isinstance(data, cfg.S3DataSourceConfig) or hasattr(data, "config"):
            raise SpecError(
                f"input_data channel {channel!r} is on S3 ({getattr(data, 'config', data)!r}); "
                "local jobs read local files: give a local path"
            )
    return input_data


def translate(kwargs: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Turn Braket ``create`` keywords into ``Job.create`` keywords; also return the AWS-only names given.

    Raises:
        SpecError: for S3 input data or a config object of the wrong kind.
    """
    kw = dict(kwargs)
    out: dict[str, Any] = {}
    aws_only: dict[str, str] = {}
    for name in _AWS_ONLY:
        value = kw.pop(name, None)
        if value is not None and not (name == "local_container_update" and value is True):
            aws_only[name] = repr(value) if name == "aws_session" else str(value)
    extra: dict[str, Any] = {}
    stopping = kw.pop("stopping_condition", None)
    if stopping is not None:
        if not hasattr(stopping, "maxRuntimeInSeconds"):
            raise SpecError(f"stopping_condition must be a StoppingCondition, got {type(stopping).__name__}")
        out["max_runtime"] = stopping.maxRuntimeInSeconds
    checkpoint = kw.pop("checkpoint_config", None)
    if checkpoint is not None:
        if not hasattr(checkpoint, "localPath"):
            raise SpecError(f"checkpoint_config must be a CheckpointConfig, got {type(checkpoint).__name__}")
        if checkpoint.localPath and checkpoint.localPath != cfg.DEFAULT_CHECKPOINT_PATH:
            extra["checkpoint_path"] = str(Path(checkpoint.localPath).expanduser().resolve())
        if getattr(checkpoint, "s3Uri", None):
            aws_only["checkpoint_config.s3Uri"] = checkpoint.s3Uri
    output = kw.pop("output_data_config", None)
    if output is not None:
        if not hasattr(output, "s3Path"):
            raise SpecError(f"output_data_config must be an OutputDataConfig, got {type(output).__name__}")
        if output.s3Path and not _is_s3(output.s3Path):
            extra["output_path"] = str(Path(output.s3Path).expanduser().resolve())
        elif output.s3Path:
            aws_only["output_data_config.s3Path"] = output.s3Path
        if getattr(output, "kmsKeyId", None):
            aws_only["output_data_config.kmsKeyId"] = output.kmsKeyId
    if kw.get("input_data") is not None:
        kw["input_data"] = _local_input(kw["input_data"])
    if aws_only:
        extra["braket_aws_only"] = aws_only
    base_extra = kw.pop("_extra", None) or {}
    out.update(kw)
    out["_extra"] = {**base_extra, **extra}
    return out, sorted(aws_only)


class AwsQuantumJob(Job):
    """A Braket hybrid job, run here: Braket's methods over ``qhybrid.Job``.

    Args:
        arn: the job's ARN (``local:job/NAME``), a Braket job ARN ending in ``job/NAME``, or its name.
    """

    TERMINAL_STATES = {"CANCELLED", "COMPLETED", "FAILED"}
    RESULTS_FILENAME = "results.json"
    DEFAULT_RESULTS_POLL_TIMEOUT = DEFAULT_RESULTS_POLL_TIMEOUT
    DEFAULT_RESULTS_POLL_INTERVAL = DEFAULT_RESULTS_POLL_INTERVAL

    def __init__(self, arn: str, aws_session=None, quiet: bool = False):
        super().__init__(job_ref_name(arn))
        store.get(self.name)  # JobNotFoundError for an unknown job
        self._quiet = quiet

    # -- creation -------------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        device: str | None,
        source_module: str,
        entry_point: str | None = None,
        image_uri: str | None = None,
        job_name: str | None = None,
        code_location: str | None = None,
        role_arn: str | None = None,
        wait_until_complete: bool = False,
        hyperparameters: dict[str, Any] | None = None,
        input_data=None,
        instance_config=None,
        distribution: str | None = None,
        stopping_condition=None,
        output_data_config=None,
        copy_checkpoints_from_job: str | None = None,
        checkpoint_config=None,
        aws_session=None,
        tags: dict[str, str] | None = None,
        logger: logging.Logger | None = None,
        quiet: bool = False,
        reservation_arn: str | None = None,
        local_container_update: bool = True,
        **qhybrid_options,
    ) -> "AwsQuantumJob":
        """Validate, snapshot and start a job (Braket's keywords; qhybrid's ``Job.create`` ones too).

        Returns:
            The job; finished when ``wait_until_complete`` (its log streamed unless ``quiet``).

        Raises:
            SpecError, InstanceError, DeviceError: bad input, in one line; nothing is written.
        """
        braket_kwargs = {k: v for k, v in locals().items() if k not in ("cls", "qhybrid_options", "logger",
                                                                          "quiet", "wait_until_complete")}
        kwargs, aws_only = translate({**braket_kwargs, **qhybrid_options})
        log = logger or _LOGGER
        if aws_only and not quiet:
            log.warning("qhybrid: %s: no local effect (recorded in the job's spec)", ", ".join(aws_only))
        job = cls(Job.create(**kwargs).name, quiet=quiet)
        if wait_until_complete:
            job._follow(print_lines=not quiet, poll=_LOCAL_POLL_S, logger=log)
        return job

    # -- Braket's methods -----------------------------------------------------------------------
    def _follow(self, *, print_lines: bool, poll: float, timeout: float | None = None, logger=None) -> None:
        sink = (lambda line: print(line, flush=True)) if print_lines else None
        seen = {"state": None}

        def on_poll(state):
            if logger is not None and state != seen["state"]:
                logger.info("qhybrid: job %s is %s", self.name, state)
                seen["state"] = state

        try:
            self.wait(timeout=timeout, stream=sink, poll=poll, on_poll=on_poll)
        except JobError:
            raise TimeoutError(f"{self.name}: polling for job completion timed out after {timeout} seconds") from None

    def state(self, use_cached_value: bool = False) -> str:
        """Return QUEUED, RUNNING, COMPLETED, FAILED or CANCELLED."""
        return super().state()

    def logs(self, wait: bool = False, poll_interval_seconds: float = 5) -> None:
        """Print the job's log; with ``wait``, keep printing until the job ends (as Braket's ``logs``)."""
        if wait:
            self._follow(print_lines=True, poll=min(poll_interval_seconds, _LOCAL_POLL_S))
        else:
            print(super().logs(), end="", flush=True)

    def result(
        self,
        poll_timeout_seconds: float = DEFAULT_RESULTS_POLL_TIMEOUT,
        poll_interval_seconds: float = DEFAULT_RESULTS_POLL_INTERVAL,
        allow_pickle: bool = False,
    ) -> dict[str, Any]:
        """Wait for the job and return what it saved with ``save_job_result`` (``{}`` if nothing).

        Raises:
            TimeoutError: when ``poll_timeout_seconds`` pass first.
            JobError: (a RuntimeError) when the job FAILED or was CANCELLED, with its reason.
            PersistedDataError: when the result is pickled and ``allow_pickle`` is False (a ValueError).
        """
        self._follow(print_lines=False, poll=min(poll_interval_seconds, _LOCAL_POLL_S), timeout=poll_timeout_seconds)
        return super().result(allow_pickle=allow_pickle)

    def download_result(
        self,
        extract_to: str | os.PathLike | None = None,
        poll_timeout_seconds: float = DEFAULT_RESULTS_POLL_TIMEOUT,
        poll_interval_seconds: float = DEFAULT_RESULTS_POLL_INTERVAL,
    ) -> None:
        """Wait for the job, then copy its results folder to ``<extract_to>/<job name>/`` (default: cwd)."""
        self._follow(print_lines=False, poll=min(poll_interval_seconds, _LOCAL_POLL_S), timeout=poll_timeout_seconds)
        target = Path(extract_to or Path.cwd()) / self.name
        shutil.copytree(self.folder / "results", target, dirs_exist_ok=True)

    def metrics(self, metric_type="timestamp", statistic="max", rank: int = 0) -> dict[str, list[Any]]:
        """Return the metric columns (Braket's shape; ``metric_type``/``statistic`` strings or Braket's enums)."""
        try:
            return super().metrics(metric_type=metric_type, statistic=statistic, rank=rank)
        except ValueError as err:
            raise SpecError(str(err)) from None

    def metadata(self, use_cached_value: bool = False) -> dict[str, Any]:
        """Return the job's description in the shape of Braket's ``GetJob`` response (plus ``qhybrid``)."""
        info, spec = self.describe(), self.spec()
        billed = info["billed_seconds"]
        meta = {
            "jobArn": self.arn,
            "jobName": self.name,
            "status": info["state"],
            "createdAt": info["created"],
            "startedAt": info["started"],
            "endedAt": info["ended"],
            "deviceConfig": {"device": spec.device},
            "hyperParameters": dict(spec.hyperparameters),
            "instanceConfig": {"instanceType": spec.instance_type, "instanceCount": spec.instance_count},
            "algorithmSpecification": {"scriptModeConfig": {"entryPoint": spec.entry_point,
                                                            "s3Uri": str(self.folder / "source")}},
            "inputDataConfig": [{"channelName": c, "dataSource": {"localPath": p}} for c, p in spec.input_data.items()],
            "outputDataConfig": {"s3Path": spec.extra.get("output_path") or str(self.folder / "results")},
            "checkpointConfig": {"localPath": spec.extra.get("checkpoint_path") or str(self.folder / "checkpoints")},
            "stoppingCondition": {"maxRuntimeInSeconds": spec.max_runtime},
            "tags": dict(spec.tags),
            "billableDuration": None if billed is None else int(billed * 1000),
            "qhybrid": info,
        }
        if info["failure_reason"]:
            meta["failureReason"] = info["failure_reason"]
        if spec.distribution:
            meta["hyperParameters"].setdefault("sagemaker_distributed_dataparallel_enabled", "true")
        return meta

    def cancel(self) -> str:
        """End the job's whole process tree; return its final state."""
        return super().cancel()

    @property
    def run_log(self) -> str:
        """The job's log so far (Braket's ``LocalQuantumJob.run_log``)."""
        return Job.logs(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}('arn':'{self.arn}')"

    def __eq__(self, other) -> bool:
        return isinstance(other, AwsQuantumJob) and other.arn == self.arn

    def __hash__(self) -> int:
        return hash(self.arn)


class LocalQuantumJob(AwsQuantumJob):
    """Braket's local job: ``create`` runs the job to its end, streaming its log (unless ``quiet``)."""

    @classmethod
    def create(cls, device: str | None, source_module: str, entry_point: str | None = None,
               *, quiet: bool = False, **kwargs) -> "LocalQuantumJob":
        """Run a job to its end (Braket's ``LocalQuantumJob.create`` keywords, and AwsQuantumJob's).

        Raises:
            SpecError, InstanceError, DeviceError: bad input, in one line; nothing is written.
        """
        kwargs.pop("wait_until_complete", None)
        job = super().create(device, source_module, entry_point, wait_until_complete=False,
                             quiet=quiet, **kwargs)
        start = time.monotonic()
        job._follow(print_lines=not quiet, poll=_LOCAL_POLL_S)
        _LOGGER.debug("job %s ended after %.2f s", job.name, time.monotonic() - start)
        return job
