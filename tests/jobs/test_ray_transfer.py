"""What crosses between the job folder and a Ray worker: env, argv, cwd, and outputs coming back."""
from __future__ import annotations

import sys

from qhybrid.jobs.backends.ray.transfer import merge_outputs, remote_argv, remote_cwd, remote_env
from qhybrid.jobs.backends.ray.worker import pack


def test_env_and_argv_are_mapped_to_the_worker_workspace(tmp_path, monkeypatch):
    folder = tmp_path / "jobs" / "j1"
    monkeypatch.setenv("UNRELATED", "same")
    env = {
        "UNRELATED": "same", "PATH": "/usr/bin", "CUDA_VISIBLE_DEVICES": "0", "RAY_ADDRESS": "x",
        "AMZN_BRAKET_JOB_RESULTS_DIR": f"{folder}/results", "AMZN_BRAKET_JOB_NAME": "j1",
        "PYTHONPATH": f"{folder}/source:/driver/only", "RANK": "1",
    }
    assert remote_env(env, folder) == {
        "AMZN_BRAKET_JOB_RESULTS_DIR": "{workdir}/results", "AMZN_BRAKET_JOB_NAME": "j1",
        "PYTHONPATH": "{workdir}/source", "RANK": "1",
    }
    argv = [sys.executable, "-m", "qhybrid.jobs.entry", f"{folder}/source", "myjob"]
    assert remote_argv(argv, folder) == ["{python}", "-m", "qhybrid.jobs.entry", "{workdir}/source", "myjob"]
    assert remote_cwd(str(folder / "source"), folder) == "source"
    assert remote_cwd("/elsewhere", folder) == "source"


def test_outputs_merge_into_the_job_folder_rank_0_last(tmp_path):
    def blob(rank_dir, text):
        (rank_dir / "results").mkdir(parents=True)
        (rank_dir / "results" / "results.json").write_text(text)
        (rank_dir / "checkpoints" / "sub").mkdir(parents=True)
        (rank_dir / "checkpoints" / "sub" / f"{text}.json").write_text(text)
        return pack(rank_dir, ["results", "checkpoints"])

    folder = tmp_path / "job"
    (folder / "results").mkdir(parents=True)
    merge_outputs({0: blob(tmp_path / "r0", "zero"), 1: blob(tmp_path / "r1", "one")}, folder)
    assert (folder / "results" / "results.json").read_text() == "zero"
    assert sorted(p.name for p in (folder / "checkpoints" / "sub").iterdir()) == ["one.json", "zero.json"]
    assert not [p for p in folder.iterdir() if p.name.startswith(".ray-out-")]
