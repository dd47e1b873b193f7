"""Data-parallel jobs: two CPU processes with the torch.distributed variables."""
from __future__ import annotations

import json

from qhybrid import InstanceConfig, Job
from qhybrid.jobs import store

from jobkit import CPU, gone, read_pid, wait_for

RANKS = """
    import json, os
    from qhybrid.jobs import log_metric, results_dir, hyperparameters
    rank = int(os.environ["RANK"])
    keys = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "OMP_NUM_THREADS")
    print("hello from rank", rank, flush=True)
    (results_dir() / f"env-{rank}.json").write_text(json.dumps({k: os.environ[k] for k in keys}))
    log_metric("loss", 10.0 + rank, iteration_number=0)
    if rank == 0:
        from qhybrid.jobs import save_job_result
        save_job_result({"hp": hyperparameters()})
"""


def test_data_parallel_two_processes(write_script):
    lines = []
    job = Job.create(CPU, write_script("ranks.py", RANKS), distribution="data_parallel",
                     instance_config=InstanceConfig(instanceType="ml.m5.2xlarge", instanceCount=2))
    job.wait(timeout=30, stream=lines.append)
    assert job.state() == "COMPLETED", job.describe()["failure_reason"]
    results = store.job_dir(job.name) / "results"
    envs = [json.loads((results / f"env-{r}.json").read_text()) for r in (0, 1)]
    assert [e["RANK"] for e in envs] == ["0", "1"]
    assert [e["LOCAL_RANK"] for e in envs] == ["0", "0"]  # one process on each of 2 instances
    assert {e["WORLD_SIZE"] for e in envs} == {"2"}
    assert envs[0]["MASTER_ADDR"] == "127.0.0.1" and envs[0]["MASTER_PORT"] == envs[1]["MASTER_PORT"]
    assert any(line == "hello from rank 0" for line in lines)
    assert any(line == "[rank 1] hello from rank 1" for line in lines)
    assert any(line.startswith("[rank 1] Metrics -") and line.endswith("rank=1;") for line in lines)
    assert job.metrics()["loss"] == [10.0]  # rank 0 alone forms the columns
    assert job.metrics(rank=1)["loss"] == [11.0]
    hp = job.result()["hp"]
    assert hp == {"sagemaker_distributed_dataparallel_enabled": "true", "sagemaker_instance_type": "ml.m5.2xlarge"}
    assert job.describe()["world_size"] == 2


def test_processes_per_instance_and_torch_process_group(write_script):
    script = write_script("ddp.py", """
        import torch, torch.distributed as dist
        from qhybrid.jobs import distributed, save_job_result
        info = distributed()
        t = torch.tensor([float(info["rank"] + 1)])
        dist.all_reduce(t)
        if info["rank"] == 0:
            save_job_result({"sum": t.item(), **info})
        dist.destroy_process_group()
    """)
    job = Job.create(CPU, script, distribution="data_parallel", processes_per_instance=2).wait(timeout=90)
    assert job.state() == "COMPLETED", job.describe()
    assert job.result() == {"sum": 3.0, "world_size": 2, "rank": 0, "local_rank": 0}


def test_failing_rank_fails_job_and_leaves_no_orphan(write_script):
    script = write_script("ranks_fail.py", """
        import os, time
        from qhybrid.jobs import results_dir
        rank = int(os.environ["RANK"])
        (results_dir() / f"pid-{rank}").write_text(str(os.getpid()))
        if rank == 1:
            while not (results_dir() / "pid-0").exists():
                time.sleep(0.01)
            raise RuntimeError("rank one broke")
        time.sleep(60)
    """)
    job = Job.create(CPU, script, distribution="data_parallel", processes_per_instance=2)
    pid0 = read_pid(store.job_dir(job.name) / "results" / "pid-0")
    job.wait(timeout=30)
    info = job.describe()
    assert info["state"] == "FAILED"
    assert info["failure_reason"].startswith("rank 1 exited with code 1: RuntimeError: rank one broke")
    wait_for(lambda: gone(pid0), timeout=5)


HUNG = """
    import os, time
    from qhybrid.jobs import save_job_result
    if os.environ["RANK"] == "0":
        save_job_result({"done": True})
    else:
        time.sleep(600)  # a rank that never returns
"""


def test_a_hung_rank_gets_a_grace_period_then_the_job_fails(write_script, monkeypatch):
    monkeypatch.setenv("QHYBRID_RANK_GRACE", "2")  # the supervisor inherits it
    job = Job.create(CPU, write_script("hung.py", HUNG), distribution="data_parallel",
                     instance_config=InstanceConfig(instanceType="ml.m5.2xlarge", instanceCount=2))
    job.wait(timeout=40)
    info = job.describe()
    assert job.state() == "FAILED"
    assert "rank 0 finished but rank 1 still ran 2 s later (hung?)" in info["failure_reason"]
    assert info["billed_seconds"] < 30


def test_a_job_without_max_runtime_gets_brakets_five_days(write_script):
    job = Job.create(CPU, write_script("quick.py", "print(1)\n"), in_process=True)
    assert job.spec().max_runtime == 432_000
