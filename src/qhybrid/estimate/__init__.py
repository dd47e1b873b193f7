"""What a run needs and costs, before it runs: work model x hardware catalogue x prices.

- :mod:`.work`: passes, bytes, arithmetic and memory of one iteration of our engines;
- :mod:`.circuit`: the same for a general engine circuit, from its fused plan;
- :mod:`.hardware`: the machine of each instance type, and this one;
- :mod:`.calibrate`: this machine measured once (cached by CPU model);
- :mod:`.model`: seconds per iteration on a machine (roofline, GPU, all-reduce);
- :mod:`.probe`: PennyLane devices timed at small sizes, scaled by 2^n;
- :mod:`.history`: arbitrary scripts from their own earlier jobs;
- :mod:`.predict`: :func:`estimate_spec` (a JobSpec, its Target, the parsed settings) -> :class:`Estimate`
  (:func:`estimate_job` from ``Job.create``'s keywords); :mod:`.render`: table rows, JSON, one line (the terminal table: ``cli.estimatetable``).

Example:
    >>> from qhybrid.estimate import estimate_job, summary      # doctest: +SKIP
    >>> print(summary(estimate_job(job_kwargs)))                # doctest: +SKIP
"""
from __future__ import annotations

from qhybrid.estimate.predict import Estimate, Row, estimate_job, estimate_spec
from qhybrid.estimate.render import summary, to_json

__all__ = ["Estimate", "Row", "estimate_job", "estimate_spec", "summary", "to_json"]
