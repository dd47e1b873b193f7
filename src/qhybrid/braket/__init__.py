"""Amazon Braket Hybrid Jobs' names, run locally: a notebook or script ports by changing imports.

    from braket.aws import AwsQuantumJob              ->  from qhybrid.braket import AwsQuantumJob
    from braket.jobs.local import LocalQuantumJob     ->  from qhybrid.braket import LocalQuantumJob
    from braket.jobs import hybrid_job, save_job_result, ...  ->  from qhybrid.braket import ...
    from braket.jobs.config import InstanceConfig     ->  from qhybrid.braket import InstanceConfig
    from braket.jobs.metrics import log_metric        ->  from qhybrid.braket.metrics import log_metric

A thin layer over ``qhybrid.Job`` (docs/jobs.md, "Braket names"). The in-job helpers
load eagerly (standard library only, for fast job start-up); the job classes,
the decorator and the config objects on first use.
"""
from __future__ import annotations

from qhybrid.jobs import script as _script
from qhybrid.jobs.script import (
    get_checkpoint_dir,
    get_hyperparameters,
    get_input_data_dir,
    get_job_device_arn,
    get_job_name,
    get_results_dir,
    log_metric,
    save_job_checkpoint,
    save_job_result,
)

_LAZY = {
    "AwsQuantumJob": "qhybrid.braket.quantum_job",
    "LocalQuantumJob": "qhybrid.braket.quantum_job",
    "hybrid_job": "qhybrid.braket.decorator",
    "InstanceConfig": "qhybrid.braket.config",
    "OutputDataConfig": "qhybrid.braket.config",
    "StoppingCondition": "qhybrid.braket.config",
    "CheckpointConfig": "qhybrid.braket.config",
    "S3DataSourceConfig": "qhybrid.braket.config",
    "PersistedJobDataFormat": "qhybrid.braket.config",
}


def load_job_result(filename=None, allow_pickle: bool = False) -> dict:
    """Load ``results.json`` of this job (or ``filename``); pickled data needs ``allow_pickle=True``.

    Raises:
        PersistedDataError: when the data is pickled and ``allow_pickle`` is False (a ValueError).
    """
    return _script.load_job_result(filename, allow_pickle=allow_pickle)


def load_job_checkpoint(job_name: str | None = None, checkpoint_file_suffix: str = "",
                        allow_pickle: bool = False) -> dict:
    """Load the checkpoint ``<job_name>(_<suffix>).json``; pickled data needs ``allow_pickle=True``.

    Raises:
        FileNotFoundError: when no such checkpoint exists.
        PersistedDataError: when the checkpoint is pickled and ``allow_pickle`` is False (a ValueError).
    """
    return _script.load_job_checkpoint(job_name, checkpoint_file_suffix, allow_pickle=allow_pickle)


__all__ = [
    *_LAZY,
    "get_checkpoint_dir", "get_hyperparameters", "get_input_data_dir", "get_job_device_arn", "get_job_name",
    "get_results_dir", "load_job_checkpoint", "load_job_result", "log_metric", "save_job_checkpoint",
    "save_job_result",
]


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'qhybrid.braket' has no attribute {name!r}")
