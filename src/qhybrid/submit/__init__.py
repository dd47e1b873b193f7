"""Submission, above the job runtime: ``Job``, ``hybrid_job``, the pre-flight, the budget check,
and ``SubmitOptions``, the keywords every way of submitting shares.

    from qhybrid.submit import Job, SubmitOptions, hybrid_job

``qhybrid.jobs`` runs any script and knows no workload; this package asks the workload
table (``workloads.table``) and the estimate (``estimate``) before it hands a spec to it.
"""
from __future__ import annotations

from qhybrid.estimate.jobs import BudgetError
from qhybrid.jobs.spec import InstanceConfig, JobSpec
from qhybrid.submit.decorator import hybrid_job
from qhybrid.submit.job import Job
from qhybrid.submit.options import SubmitOptions

__all__ = ["BudgetError", "InstanceConfig", "Job", "JobSpec", "SubmitOptions", "hybrid_job"]
