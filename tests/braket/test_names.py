"""Every Braket name the issue lists exists under qhybrid.braket, with Braket's defaults."""
from __future__ import annotations

import pytest

import qhybrid.braket as qb
from qhybrid.errors import PersistedDataError

NAMES = ["AwsQuantumJob", "LocalQuantumJob", "hybrid_job", "InstanceConfig", "OutputDataConfig",
         "StoppingCondition", "CheckpointConfig", "save_job_result", "save_job_checkpoint", "load_job_checkpoint",
         "load_job_result", "get_job_device_arn", "get_hyperparameters", "get_input_data_dir", "get_results_dir",
         "get_checkpoint_dir", "get_job_name", "log_metric"]


@pytest.mark.parametrize("name", NAMES)
def test_name_exists(name):
    assert callable(getattr(qb, name))


def test_metrics_module_and_config_module():
    from qhybrid.braket.config import InstanceConfig
    from qhybrid.braket.metrics import log_metric

    assert log_metric is qb.log_metric and InstanceConfig is qb.InstanceConfig


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'AwsSession'"):
        qb.AwsSession  # noqa: B018


@pytest.fixture
def in_job(tmp_path, monkeypatch):
    for var, sub in (("AMZN_BRAKET_JOB_RESULTS_DIR", "results"), ("AMZN_BRAKET_CHECKPOINT_DIR", "ckpt")):
        (tmp_path / sub).mkdir()
        monkeypatch.setenv(var, str(tmp_path / sub))
    monkeypatch.setenv("AMZN_BRAKET_JOB_NAME", "nm-job")
    return tmp_path


@pytest.mark.parametrize("fmt", ["pickle", "pickled_v4", qb.PersistedJobDataFormat.PICKLED_V4])
def test_pickled_loads_need_allow_pickle(in_job, fmt):
    qb.save_job_checkpoint({"s": {1, 2}}, data_format=fmt)
    with pytest.raises(PersistedDataError, match="allow_pickle=True"):
        qb.load_job_checkpoint()
    assert qb.load_job_checkpoint(allow_pickle=True) == {"s": {1, 2}}
    qb.save_job_result({"s": {3}}, data_format=fmt)
    qb.save_job_result({"t": 4})  # results already pickled stay pickled (Braket)
    with pytest.raises(PersistedDataError, match="allow_pickle=True"):
        qb.load_job_result()
    assert qb.load_job_result(allow_pickle=True) == {"s": {3}, "t": 4}


def test_bad_data_format_is_refused_before_writing(in_job):
    with pytest.raises(ValueError, match="data_format 'json' is not one of"):
        qb.save_job_checkpoint({"a": 1}, data_format="json")
    assert not any((in_job / "ckpt").iterdir())
