"""SubmitOptions: the submit keywords written once, shared by Job.create, @hybrid_job and Braket's launchers."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from qhybrid import SubmitOptions
from qhybrid.errors import SpecError
from qhybrid.jobs import store
from qhybrid.submit import Job, hybrid_job
from qhybrid.submit.options import NAMES


def test_keywords_apply_over_an_options_object_which_stays_frozen():
    base = SubmitOptions.of(max_runtime=60, tags={"a": "b"})
    opts = SubmitOptions.of(base, max_cost=0.5)
    assert (opts.max_runtime, opts.max_cost, opts.tags) == (60, 0.5, {"a": "b"})
    assert base.max_cost is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.max_cost = 1.0  # type: ignore[misc]


def test_an_unknown_keyword_is_one_line_naming_the_closest():
    with pytest.raises(SpecError, match=r"unknown submit option 'max_runtme' \(did you mean 'max_runtime'\?\)"):
        SubmitOptions.of(max_runtme=5)
    with pytest.raises(SpecError, match="launch='spawn': valid are 'exec', 'fork'"):
        SubmitOptions(launch="spawn")


def test_the_launchers_share_one_set_of_names():
    """Every SubmitOptions field is a keyword of Braket's launchers or one of qhybrid's own (passed
    through them); @hybrid_job and Job.create take them as keywords."""
    import inspect

    from qhybrid.braket import AwsQuantumJob

    braket = set(inspect.signature(AwsQuantumJob.create).parameters)
    qhybrid_only = NAMES - braket
    assert {"job_name", "hyperparameters", "input_data", "instance_config", "distribution",
            "copy_checkpoints_from_job", "wait_until_complete", "tags"} <= braket
    assert qhybrid_only == {"max_runtime", "max_cost", "backend", "processes_per_instance", "in_process",
                            "address", "force", "launch", "extra"}
    with pytest.raises(SpecError, match="unknown submit option 'max_runtme'"):
        hybrid_job(device=None, max_runtme=5)


def test_a_rejected_job_writes_nothing(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("print('hi')\n")
    with pytest.raises(SpecError, match="unknown submit option"):
        Job.create("local:qhybrid/qhybrid.cpu", script, job_nme="x")
    assert not store.exists() or store.rows() == []


def test_an_options_object_submits_like_keywords(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("from qhybrid.jobs import save_job_result\nsave_job_result({'ok': 1})\n")
    opts = SubmitOptions.of(in_process=True, tags={"via": "options"}, hyperparameters={"a": 1})
    job = Job.create("local:qhybrid/qhybrid.cpu", Path(script), options=opts, job_name="opts-1")
    assert job.result() == {"ok": 1}
    spec = job.spec()
    assert (spec.tags, spec.hyperparameters, spec.name) == ({"via": "options"}, {"a": "1"}, "opts-1")
    assert spec.target().torch_device == "cpu" and spec.device_target["name"] == "qhybrid.cpu"
