"""In-job helpers write the same files and lines as Braket's SDK."""
from __future__ import annotations

import json
import os

import pytest

from qhybrid.errors import PersistedDataError

from qhybrid.jobs import script


@pytest.fixture
def job_env(tmp_path, monkeypatch):
    for key, sub in (("AMZN_BRAKET_JOB_RESULTS_DIR", "results"), ("AMZN_BRAKET_CHECKPOINT_DIR", "ckpt"),
                     ("AMZN_BRAKET_INPUT_DIR", "input")):
        (tmp_path / sub).mkdir()
        monkeypatch.setenv(key, str(tmp_path / sub))
    hp = tmp_path / "hp.json"
    hp.write_text(json.dumps({"lr": "0.1"}))
    monkeypatch.setenv("AMZN_BRAKET_HP_FILE", str(hp))
    monkeypatch.setenv("AMZN_BRAKET_JOB_NAME", "job-a")
    monkeypatch.setenv("AMZN_BRAKET_DEVICE_ARN", "local:pennylane/lightning.qubit")
    return tmp_path


def test_contract_readers(job_env):
    assert script.hyperparameters() == {"lr": "0.1"}
    assert script.device() == "local:pennylane/lightning.qubit"
    assert script.job_name() == "job-a"
    assert script.input_dir("data") == job_env / "input" / "data"
    assert script.results_dir() == job_env / "results"
    assert script.checkpoint_dir() == job_env / "ckpt"


def test_save_job_result_layout_and_merge(job_env):
    script.save_job_result({"a": 1})
    script.save_job_result({"b": [1, 2]})
    doc = json.loads((job_env / "results" / "results.json").read_text())
    assert doc == {"braketSchemaHeader": {"name": "braket.jobs_data.persisted_job_data", "version": "1"},
                   "dataDictionary": {"a": 1, "b": [1, 2]}, "dataFormat": "plaintext"}
    assert not [p for p in (job_env / "results").iterdir() if p.name != "results.json"]  # no temp files left



def test_save_return_value_wraps_and_refuses_what_json_cannot_hold(job_env):
    """A job function's return value: wrapped as {"result": ...} when asked; a value plain text
    cannot hold is refused in one line naming its type and how to pickle, nothing written."""
    with pytest.raises(TypeError, match=r"return value \(set\) is not JSON-serializable; .*use hybrid_job\(\.\.\., "
                                        r"pickle_result=True\)"):
        script.save_return_value({1, 2}, data_format="plaintext", wrap=True, hint="hybrid_job(..., pickle_result=True)")
    assert not (job_env / "results" / "results.json").exists()
    script.save_return_value([1, 2], data_format="plaintext", wrap=True, hint="")
    assert json.loads((job_env / "results" / "results.json").read_text())["dataDictionary"] == {"result": [1, 2]}

def test_checkpoints_roundtrip_and_pickled(job_env):
    script.save_job_checkpoint({"step": 2})
    script.save_job_checkpoint({"obj": {1, 2}}, checkpoint_file_suffix="p", data_format="pickled_v4")
    assert (job_env / "ckpt" / "job-a.json").exists() and (job_env / "ckpt" / "job-a_p.json").exists()
    assert script.load_job_checkpoint("job-a") == {"step": 2}
    with pytest.raises(PersistedDataError, match="allow_pickle=True"):
        script.load_job_checkpoint(checkpoint_file_suffix="p")
    assert script.load_job_checkpoint(checkpoint_file_suffix="p", allow_pickle=True) == {"obj": {1, 2}}
    with pytest.raises(FileNotFoundError):
        script.load_job_checkpoint("other")
    with pytest.raises(ValueError):
        script.save_job_checkpoint({})


def test_latest_checkpoint_prefers_own_then_newest_copied_in(job_env):
    assert script.latest_checkpoint("qaoa") is None
    ckpt = job_env / "ckpt"
    for name, step in (("old-job", 1), ("newer-job", 2)):
        (ckpt / f"{name}_qaoa.json").write_text(script.persisted({"step": step}))
        os.utime(ckpt / f"{name}_qaoa.json", (step, step))
    (ckpt / "other_qml.json").write_text(script.persisted({"step": 99}))
    assert script.latest_checkpoint("qaoa") == {"step": 2}
    script.save_job_checkpoint({"step": 3}, checkpoint_file_suffix="qaoa")  # this job's own wins
    os.utime(ckpt / "job-a_qaoa.json", (0, 0))
    assert script.latest_checkpoint("qaoa") == {"step": 3}


def test_log_metric_line(capsys):
    script.log_metric("loss", 0.5, timestamp=12.5, iteration_number=3)
    script.log_metric("acc", 1)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Metrics - timestamp=12.5; loss=0.5; iteration_number=3;"
    assert out[1].startswith("Metrics - timestamp=") and out[1].endswith("; acc=1;")


def test_standalone_fallbacks(tmp_path, monkeypatch):
    for key in [k for k in os.environ if k.startswith("AMZN_BRAKET_")]:
        monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    assert script.hyperparameters() == {}
    assert script.device() == "local:qhybrid/qhybrid.cpu"
    script.save_job_result({"x": 1})
    assert (tmp_path / "qhybrid-local" / "results" / "results.json").exists()


def test_distributed_single_process(monkeypatch):
    for key in ("RANK", "LOCAL_RANK", "WORLD_SIZE"):
        monkeypatch.delenv(key, raising=False)
    assert script.distributed() == {"world_size": 1, "rank": 0, "local_rank": 0}


def test_braket_named_aliases(job_env):
    assert script.get_hyperparameters() == {"lr": "0.1"}
    assert script.get_job_device_arn() == "local:pennylane/lightning.qubit"
    assert script.get_job_name() == "job-a"
    assert script.get_input_data_dir("x") == str(job_env / "input" / "x")
    assert script.get_results_dir() == str(job_env / "results")
    assert script.get_checkpoint_dir() == str(job_env / "ckpt")
    script.save_job_result({"r": 1})
    assert script.load_job_result() == {"r": 1}


def test_load_job_checkpoint_reads_job_names_only(job_env, tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text(script.persisted({"stolen": True}))
    for name in (str(secret.with_suffix("")), "../secret", "job-a\n"):
        with pytest.raises(PersistedDataError, match="invalid job name"):
            script.load_job_checkpoint(name)


def test_checkpoint_suffix_cannot_write_outside(job_env):
    with pytest.raises(PersistedDataError, match="checkpoint_file_suffix"):
        script.save_job_checkpoint({"a": 1}, checkpoint_file_suffix="x/../..")
    assert sorted(p.name for p in job_env.rglob("*.json")) == ["hp.json"]


def test_latest_checkpoint_refuses_a_pickled_copy(job_env):
    (job_env / "ckpt" / "other-job_q.json").write_text(script.persisted({"x": 1}, "pickled_v4"))
    with pytest.raises(PersistedDataError, match="allow_pickle=True"):
        script.latest_checkpoint("q")
    assert script.latest_checkpoint("q", allow_pickle=True) == {"x": 1}


def test_load_job_result_refuses_pickle_and_a_merge_never_unpickles(job_env, monkeypatch):
    script.save_job_result({"a": 1}, data_format="pickled_v4")
    import pickle

    with monkeypatch.context() as m:
        m.setattr(pickle, "loads", lambda *_a, **_k: pytest.fail("unpickled"))
        script.save_job_result({"b": 2}, data_format="pickled_v4")  # merges the encoded values
        with pytest.raises(PersistedDataError, match="allow_pickle=True"):
            script.load_job_result()
    assert script.load_job_result(allow_pickle=True) == {"a": 1, "b": 2}
