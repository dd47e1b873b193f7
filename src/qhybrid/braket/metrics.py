"""``braket.jobs.metrics`` under qhybrid: ``log_metric`` prints the metric line the runtime records.

``MetricType`` and ``MetricStatistic`` are Braket's enums for ``job.metrics(metric_type=, statistic=)``.

Example:
    >>> from qhybrid.braket.metrics import log_metric
    >>> log_metric(metric_name="loss", value=0.5, iteration_number=1)  # doctest: +SKIP
"""
from __future__ import annotations

from enum import Enum

from qhybrid.jobs.script import log_metric


class MetricType(str, Enum):
    """The column that keys ``job.metrics()``."""

    TIMESTAMP = "timestamp"
    ITERATION_NUMBER = "iteration_number"


class MetricStatistic(str, Enum):
    """Which value ``job.metrics()`` keeps when a metric repeats under one key."""

    MAX = "max"
    MIN = "min"


__all__ = ["MetricStatistic", "MetricType", "log_metric"]
