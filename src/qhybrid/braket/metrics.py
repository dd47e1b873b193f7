"""``braket.jobs.metrics`` under qhybrid: ``log_metric`` prints the metric line the runtime records.

Example:
    >>> from qhybrid.braket.metrics import log_metric
    >>> log_metric(metric_name="loss", value=0.5, iteration_number=1)  # doctest: +SKIP
"""
from __future__ import annotations

from qhybrid.jobs.script import log_metric

__all__ = ["log_metric"]
