"""Braket's job configuration objects (``braket.jobs.config``) and data format enum, standard library only.

``InstanceConfig`` is qhybrid's own (Braket's keyword names, validated against the
instance catalogue). The Braket SDK's own objects, when it is installed, are
accepted wherever these are (``Job.create`` too): they are read by attribute name.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from qhybrid.errors import SpecError
from qhybrid.jobs.spec import InstanceConfig

DEFAULT_CHECKPOINT_PATH = "/opt/jobs/checkpoints"  # Braket's path inside its container
DEFAULT_MAX_RUNTIME_S = 5 * 24 * 60 * 60


class PersistedJobDataFormat(str, Enum):
    """How ``save_job_result`` / ``save_job_checkpoint`` encode values (Braket's enum)."""

    PLAINTEXT = "plaintext"
    PICKLED_V4 = "pickled_v4"


@dataclass(frozen=True)
class CheckpointConfig:
    """Where checkpoints go: ``localPath`` (a local folder here), ``s3Uri`` (AWS only, recorded)."""

    localPath: str = DEFAULT_CHECKPOINT_PATH
    s3Uri: str | None = None


@dataclass(frozen=True)
class OutputDataConfig:
    """Where the job's output goes: ``s3Path`` (a local folder here; ``s3://`` recorded only)."""

    s3Path: str | None = None
    kmsKeyId: str | None = None


@dataclass(frozen=True)
class StoppingCondition:
    """The job's time limit: ``maxRuntimeInSeconds`` (Braket's default: 5 days)."""

    maxRuntimeInSeconds: int = DEFAULT_MAX_RUNTIME_S

    def __post_init__(self):
        value = self.maxRuntimeInSeconds
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise SpecError(f"maxRuntimeInSeconds must be a positive number of seconds, got {value!r}")


class S3DataSourceConfig:
    """Input data on S3 (Braket's class); a local job cannot read it and says so at create time."""

    def __init__(self, s3_data: str, content_type: str | None = None):
        self.config = {"dataSource": {"s3DataSource": {"s3Uri": s3_data}}}
        if content_type is not None:
            self.config["contentType"] = content_type


__all__ = [
    "CheckpointConfig", "InstanceConfig", "OutputDataConfig", "PersistedJobDataFormat", "S3DataSourceConfig",
    "StoppingCondition",
]
