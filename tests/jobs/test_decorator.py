"""@hybrid_job: arguments in, return value as the result."""
from __future__ import annotations

import json
from fractions import Fraction

import pytest

from qhybrid import hybrid_job
from qhybrid.errors import PersistedDataError, SpecError
from qhybrid.jobs import store

import decorated_funcs as funcs


def test_decorated_function_runs_as_a_job():
    job = funcs.scaled_sum([1, 2, 3], offset=1)
    assert job.wait(timeout=30).result() == {"result": 19}
    assert job.metrics()["partial"] == [6]
    raw = json.loads((store.job_dir(job.name) / "results" / "results.json").read_text())
    assert raw["dataFormat"] == "plaintext"


def test_pickled_result_and_pickled_arguments():
    job = funcs.fraction(1, 3)
    with pytest.raises(PersistedDataError, match="allow_pickle=True"):
        job.result()
    assert job.result(allow_pickle=True) == {"result": Fraction(1, 3)}
    assert json.loads((store.job_dir(job.name) / "results" / "results.json").read_text())["dataFormat"] == "pickled_v4"
    assert funcs.takes_pickled_args(Fraction(2, 4)).result() == {"result": "1/2"}


def test_non_json_result_fails_with_a_hint():
    job = funcs.not_json().wait(timeout=30)
    assert job.state() == "FAILED"
    assert "pickle_result=True" in job.describe()["failure_reason"]


def test_local_function_is_rejected():
    with pytest.raises(SpecError, match="top-level function"):
        @hybrid_job(device="local:qhybrid/qhybrid.cpu")
        def inner():
            return 1


def test_module_calling_its_own_job_at_import_does_not_resubmit(write_script, monkeypatch):
    import importlib

    from qhybrid import Job

    path = write_script("selfcall.py", """
        from qhybrid.jobs import hybrid_job

        @hybrid_job(device="local:qhybrid/qhybrid.cpu")
        def plus_one(x):
            return x + 1

        JOB = plus_one(1)  # outside a job: submits; inside it: just runs
    """)
    monkeypatch.syspath_prepend(str(path.parent))
    module = importlib.import_module("selfcall")
    assert module.JOB.wait(timeout=30).result() == {"result": 2}
    assert len(Job.list()) == 1
