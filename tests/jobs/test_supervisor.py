"""The supervisor's environment contract and failure text."""
from __future__ import annotations

from qhybrid.jobs import store
from qhybrid.jobs.spec import build_spec
from qhybrid.jobs.supervisor import free_port, job_env, traceback_tail


def test_job_env_is_the_braket_contract(write_script, monkeypatch):
    monkeypatch.setenv("RANK", "9")  # inherited coordinates never leak into a job
    spec = build_spec(device="local:qhybrid/qhybrid.cpu", source_module=write_script("s.py", "pass\n"),
                      job_name="envjob", distribution="data_parallel", processes_per_instance=2)
    env = job_env(spec, rank=1, port=12345)
    folder = store.job_dir("envjob")
    assert env["AMZN_BRAKET_DEVICE_ARN"] == "local:qhybrid/qhybrid.cpu"
    assert env["AMZN_BRAKET_HP_FILE"] == str(folder / "hyperparameters.json")
    assert env["AMZN_BRAKET_INPUT_DIR"] == str(folder / "input")
    assert env["AMZN_BRAKET_JOB_RESULTS_DIR"] == str(folder / "results")
    assert env["AMZN_BRAKET_CHECKPOINT_DIR"] == str(folder / "checkpoints")
    assert env["AMZN_BRAKET_JOB_NAME"] == "envjob"
    assert (env["RANK"], env["LOCAL_RANK"], env["WORLD_SIZE"]) == ("1", "1", "2")
    assert (env["MASTER_ADDR"], env["MASTER_PORT"]) == ("127.0.0.1", "12345")
    assert env["OMP_NUM_THREADS"] == env["QHYBRID_TORCH_THREADS"] and int(env["OMP_NUM_THREADS"]) >= 1
    assert env["CUDA_VISIBLE_DEVICES"] == ""  # ml.m5.large has no GPU


def test_traceback_tail_takes_the_last_traceback():
    text = "noise\nTraceback (most recent call last):\n  old\nA: 1\nmore\nTraceback (most recent call last):\n" \
           '  File "x.py", line 1\nValueError: new\n'
    assert traceback_tail(text) == 'Traceback (most recent call last):\n  File "x.py", line 1\nValueError: new'
    assert traceback_tail("a\nb\n") == "a\nb"


def test_free_port():
    assert 0 < free_port() < 65536
