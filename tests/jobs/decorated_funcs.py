"""Top-level functions decorated with hybrid_job (the decorator test imports them)."""
from __future__ import annotations

from fractions import Fraction

from qhybrid.jobs import hyperparameters, log_metric

from qhybrid.submit import hybrid_job

CPU = "local:qhybrid/qhybrid.cpu"


@hybrid_job(device=CPU, hyperparameters={"scale": 3})
def scaled_sum(values, *, offset=0):
    log_metric("partial", sum(values), iteration_number=0)
    return sum(values) * int(hyperparameters()["scale"]) + offset


@hybrid_job(device=CPU, pickle_result=True, in_process=True)
def fraction(num, den):
    return Fraction(num, den)


@hybrid_job(device=CPU)
def not_json():
    return Fraction(1, 3)


@hybrid_job(device=CPU, in_process=True)
def takes_pickled_args(value):
    return str(value)
