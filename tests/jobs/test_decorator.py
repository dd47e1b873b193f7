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
    assert job.spec().hyperparameters == {"scale": "3", "values": "[1, 2, 3]", "offset": "1"}
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


def test_function_travels_by_value_closures_and_runtime_globals(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    factor = 7  # a local of the caller, captured by the closure

    @hybrid_job(device="local:qhybrid/qhybrid.cpu")
    def inner(x, *, label="a", **extra):
        import os

        with open("written.txt", "w") as f:  # the working folder is the results folder
            f.write(label)
        return {"value": x * factor, "cwd_is_results": os.getcwd() == os.environ["AMZN_BRAKET_JOB_RESULTS_DIR"],
                "extra": extra}

    job = inner(3, more=1.5)
    assert job.wait(timeout=60).result() == {"value": 21, "cwd_is_results": True, "extra": {"more": 1.5}}
    assert job.spec().hyperparameters == {"x": "3", "label": "a", "more": "1.5"}
    assert (job.folder / "results" / "written.txt").read_text() == "a"
    assert job.name.startswith("inner-")


def test_hyperparameters_sanitized_as_braket_does():
    from qhybrid.submit.decorator import call_hyperparameters, sanitize

    def f(a, b=(1, 2), *rest, c="$x&y`", **kw):
        return None

    assert call_hyperparameters(f, (1,), {"c": "line\nnext", "z": 2}) == {
        "a": "1", "b": "{1, 2}", "c": "line next", "z": "2"}
    assert sanitize("$(a&b)`") == "?{a+b}'"
    assert len(sanitize("x" * 3000)) == 2500


def test_relative_input_data_linked_into_the_working_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "numbers.txt").write_text("1 2 3")
    (tmp_path / "single.txt").write_text("solo")

    @hybrid_job(device=None, input_data={"folder": "data", "file": "single.txt"})
    def reads():
        import os

        from qhybrid.jobs import device
        return {"numbers": open("data/numbers.txt").read(), "single": open("single.txt").read(),
                "device": device(), "env": os.environ["AMZN_BRAKET_DEVICE_ARN"]}

    result = reads().wait(timeout=60).result()
    assert result == {"numbers": "1 2 3", "single": "solo", "device": "local:none/none", "env": "local:none/none"}


def test_bad_data_format_and_dependencies_are_refused_at_decoration(home):
    from jobkit import nothing_written

    with pytest.raises(SpecError, match="data_format 'json' is not one of 'plaintext', 'pickled_v4'"):
        hybrid_job(device="local:qhybrid/qhybrid.cpu", data_format="json")
    with pytest.raises(SpecError, match="dependencies file 'missing.txt' does not exist"):
        hybrid_job(device="local:qhybrid/qhybrid.cpu", dependencies="missing.txt")
    assert nothing_written(home)


def test_unpicklable_argument_is_refused_in_one_line(home):
    import threading

    from jobkit import nothing_written

    @hybrid_job(device="local:qhybrid/qhybrid.cpu")
    def takes(lock):
        return 1

    with pytest.raises(SpecError, match="could not serialize takes"):
        takes(threading.Lock())
    assert nothing_written(home)


def test_module_calling_its_own_job_at_import_does_not_resubmit(write_script, monkeypatch):
    import importlib

    from qhybrid import Job

    path = write_script("selfcall.py", """
        from qhybrid.submit import hybrid_job

        @hybrid_job(device="local:qhybrid/qhybrid.cpu")
        def plus_one(x):
            return x + 1

        JOB = plus_one(1)  # outside a job: submits; inside it: just runs
    """)
    monkeypatch.syspath_prepend(str(path.parent))
    module = importlib.import_module("selfcall")
    assert module.JOB.wait(timeout=30).result() == {"result": 2}
    assert len(Job.list()) == 1
