"""The job runtime: runs any script (spec, store, supervisor, backends); in-job helpers.

    from qhybrid.jobs import hyperparameters, save_job_result, log_metric
    from qhybrid import Job, InstanceConfig, hybrid_job       # submission: qhybrid.submit

The in-job helpers load eagerly (standard library only); the rest lazily, so a
job script importing helpers starts fast. ``Job`` and ``hybrid_job`` live in
``qhybrid.submit``, above the runtime; ``qhybrid.jobs.Job`` and
``qhybrid.jobs.hybrid_job`` stay as names for code written before (looked up by
name when first used: the runtime itself never imports submission).
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
    "InstanceConfig": "qhybrid.jobs.spec",
    "JobSpec": "qhybrid.jobs.spec",
}
# names kept for code written before submission moved above the runtime (never used by the runtime)
_SUBMIT_ALIASES = ("Job", "hybrid_job")

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
    if name in _LAZY or name in _SUBMIT_ALIASES:
        import importlib

        return getattr(importlib.import_module(_LAZY.get(name, "qhybrid.submit")), name)
    raise AttributeError(f"module 'qhybrid.jobs' has no attribute {name!r}")
