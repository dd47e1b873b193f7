"""The job runtime: submit, supervise and inspect hybrid jobs; in-job helpers.

    from qhybrid.jobs import Job, InstanceConfig, hybrid_job
    from qhybrid.jobs import hyperparameters, save_job_result, log_metric

The in-job helpers load eagerly (standard library only); the rest lazily, so a
job script importing helpers starts fast.
"""
from __future__ import annotations

from qhybrid.jobs.script import (
    checkpoint_dir,
    device,
    distributed,
    get_checkpoint_dir,
    get_hyperparameters,
    get_input_data_dir,
    get_job_device_arn,
    get_job_name,
    get_results_dir,
    hyperparameters,
    input_dir,
    job_name,
    latest_checkpoint,
    load_job_checkpoint,
    load_job_result,
    log_metric,
    results_dir,
    save_job_checkpoint,
    save_job_result,
)

_LAZY = {
    "Job": "qhybrid.jobs.job",
    "InstanceConfig": "qhybrid.jobs.spec",
    "JobSpec": "qhybrid.jobs.spec",
    "hybrid_job": "qhybrid.jobs.decorator",
}

__all__ = [
    "Job",
    "InstanceConfig",
    "JobSpec",
    "hybrid_job",
    "checkpoint_dir",
    "device",
    "distributed",
    "hyperparameters",
    "input_dir",
    "job_name",
    "latest_checkpoint",
    "load_job_checkpoint",
    "load_job_result",
    "log_metric",
    "get_checkpoint_dir",
    "get_hyperparameters",
    "get_input_data_dir",
    "get_job_device_arn",
    "get_job_name",
    "get_results_dir",
    "results_dir",
    "save_job_checkpoint",
    "save_job_result",
]


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'qhybrid.jobs' has no attribute {name!r}")
