"""Jobs on a Ray cluster: same results as local, data parallel, cancel, dead workers, sweeps.

One local Ray cluster (2 CPUs, loopback only) serves the whole module; jobs
find it through ``QHYBRID_RAY_ADDRESS``, as detached supervisors would.
"""
from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

pytest.importorskip("ray")

import qhybrid.workloads.qaoa as qaoa_workload  # noqa: E402
import qhybrid.workloads.qml as qml_workload  # noqa: E402
from qhybrid.jobs import InstanceConfig, Job, store  # noqa: E402
from qhybrid.jobs.backends import ray_cluster  # noqa: E402

pytestmark = [pytest.mark.ray, pytest.mark.timeout(600)]

CPU = "local:qhybrid/qhybrid.cpu"
QAOA_HP = {"n_nodes": "6", "n_edges": "8", "n_layers": "2", "iterations": "3", "seed": "7"}
QML_HP = {"nwires": "4", "ndata": "24", "batch_size": "8", "epochs": "2", "lr": "0.05", "seed": "11"}
SLOW = """
import os, time
from qhybrid.jobs import save_job_checkpoint
print(f"actor-pid={os.getppid()}", flush=True)
save_job_checkpoint({"step": 1})
for _ in range(600):
    time.sleep(0.1)
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A 2-CPU local Ray cluster for this module, torn down (and checked gone) at the end."""
    home = tmp_path_factory.mktemp("ray-cluster-home")
    with mock.patch.dict(os.environ, {"QHYBRID_HOME": str(home)}):
        head = ray_cluster.start_local_cluster(num_cpus=2, object_store_mb=200)
    try:
        with mock.patch.dict(os.environ, {"QHYBRID_RAY_ADDRESS": head.address}):
            yield head
    finally:
        with mock.patch.dict(os.environ, {"QHYBRID_HOME": str(home)}):
            assert ray_cluster.stop_local_cluster()
        assert not head.alive()


def _wait_log(job: Job, pattern: str, timeout: float = 60.0) -> re.Match:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(pattern, job.logs())
        if found:
            return found
        assert job.state() in ("QUEUED", "RUNNING"), job.describe()
        time.sleep(0.1)
    raise AssertionError(f"{pattern!r} not in the log of {job.name}:\n{job.logs()}")


def test_qaoa_job_gives_the_same_result_as_local(cluster):
    local = Job.create(CPU, qaoa_workload.__file__, entry_point="qaoa", hyperparameters=QAOA_HP,
                       in_process=True)
    job = Job.create(CPU, qaoa_workload.__file__, entry_point="qaoa", hyperparameters=QAOA_HP,
                     backend="ray").wait(timeout=120)
    assert job.state() == "COMPLETED", job.describe()["failure_reason"]
    ours, theirs = job.result(), local.result()
    assert ours["best_bitstring"] == theirs["best_bitstring"]
    for key in ("params", "cost", "best_value", "optimum"):
        np.testing.assert_allclose(ours[key], theirs[key], atol=1e-12, rtol=0, err_msg=key)
    assert job.metrics()["Cost"] == pytest.approx(local.metrics()["Cost"], abs=1e-12)
    assert f"placed on the Ray cluster at {cluster.address}" in job.logs()


def test_two_rank_data_parallel_qml_matches_local_data_parallel(cluster):
    kwargs = dict(entry_point="qml", hyperparameters=QML_HP, distribution="data_parallel",
                  processes_per_instance=2)
    local = Job.create(CPU, qml_workload.__file__, **kwargs)
    job = Job.create(CPU, qml_workload.__file__, backend="ray", **kwargs)
    local.wait(timeout=180)
    job.wait(timeout=180)
    assert job.state() == "COMPLETED", job.describe()["failure_reason"]
    result, expected = job.result(), local.result()
    assert result["world_size"] == 2
    assert result["losses"] == pytest.approx(expected["losses"], abs=1e-10)
    assert job.metrics(metric_type="iteration_number")["Loss"] == pytest.approx(expected["losses"], abs=1e-10)
    checkpoints = sorted(p.name for p in (store.job_dir(job.name) / "checkpoints").iterdir())
    assert checkpoints == [f"{job.name}_qml.json"]
    assert (store.job_dir(job.name) / "logs" / "rank-1.log").exists()


def test_checkpoints_come_home_while_running_and_cancel_stops_the_actors(cluster, write_script):
    job = Job.create(CPU, str(write_script("slow.py", SLOW)), backend="ray")
    pid = int(_wait_log(job, r"actor-pid=(\d+)").group(1))
    checkpoint = store.job_dir(job.name) / "checkpoints" / f"{job.name}.json"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not checkpoint.exists():
        time.sleep(0.2)
    assert checkpoint.exists() and job.state() == "RUNNING"  # synced while the job runs
    assert job.cancel() == "CANCELLED"
    assert job.describe()["failure_reason"] == "cancelled on request"
    assert checkpoint.exists()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
        time.sleep(0.1)
    assert not Path(f"/proc/{pid}").exists(), "the rank's actor outlived the cancel"


def test_a_killed_worker_fails_the_job(cluster, write_script):
    job = Job.create(CPU, str(write_script("slow.py", SLOW)), backend="ray")
    pid = int(_wait_log(job, r"actor-pid=(\d+)").group(1))
    os.kill(pid, signal.SIGKILL)
    assert job.wait(timeout=60).state() == "FAILED"
    assert "worker died" in job.describe()["failure_reason"]


def test_a_request_the_cluster_can_never_fit_fails_with_a_cluster_error(cluster, write_script):
    job = Job.create(CPU, str(write_script("tiny.py", "print('hi')\n")), backend="ray",
                     distribution="data_parallel", instance_config=InstanceConfig(instanceCount=3))
    assert job.wait(timeout=60).state() == "FAILED"
    assert "ClusterError" in job.describe()["failure_reason"]
    assert "at least one CPU per instance" in job.describe()["failure_reason"]


def test_a_sweep_returns_at_once_and_the_cluster_runs_the_jobs_by_resources(cluster, write_script):
    script = write_script("step.py", """
        import time
        from qhybrid.jobs import save_job_result
        start = time.time(); time.sleep(1.0)
        save_job_result({"start": start, "end": time.time()})
    """)
    t0 = time.monotonic()
    jobs = [Job.create(CPU, str(script), backend="ray", hyperparameters={"i": i},
                       instance_config=InstanceConfig(instanceType="ml.m5.2xlarge")) for i in range(2)]
    assert time.monotonic() - t0 < 10  # submission does not wait for the cluster
    spans = []
    for job in jobs:
        job.wait(timeout=120)
        assert job.state() == "COMPLETED", job.describe()["failure_reason"]
        spans.append((job.result()["start"], job.result()["end"]))
    (s1, e1), (s2, e2) = sorted(spans)
    assert s2 >= e1 - 0.05  # each takes the whole 2-CPU cluster, so they ran one after the other


def test_local_cluster_is_started_on_first_use_reused_and_stopped():
    first = ray_cluster.ensure_local_cluster()
    try:
        assert first.alive() and first.address.startswith("127.0.0.1:")
        assert ray_cluster.ensure_local_cluster().pid == first.pid  # reused, not restarted
        with mock.patch.dict(os.environ, {"QHYBRID_RAY_ADDRESS": "", "RAY_ADDRESS": ""}):
            assert ray_cluster.resolve_address() == first.address
        assert ray_cluster.resolve_address("10.0.0.5:6379") == "10.0.0.5:6379"
    finally:
        assert ray_cluster.stop_local_cluster()
    assert not first.alive() and ray_cluster.read_record() is None
    assert not ray_cluster.stop_local_cluster()


def test_submission_check_refuses_what_can_never_fit_and_dead_addresses(cluster, write_script):
    from qhybrid.errors import ClusterError
    from qhybrid.jobs.backends.ray import check_submission
    from qhybrid.jobs.spec import build_spec

    script = str(write_script("tiny.py", "print('hi')\n"))
    fits = build_spec(device=CPU, source_module=script, backend="ray")
    assert check_submission(fits) == cluster.address
    too_big = build_spec(device=CPU, source_module=script, backend="ray", distribution="data_parallel",
                         instance_config=InstanceConfig(instanceCount=3))
    with pytest.raises(ClusterError, match="3 x ml.m5.large needs at least one CPU per instance"):
        check_submission(too_big)
    with mock.patch.dict(os.environ, {"QHYBRID_RAY_ADDRESS": "127.0.0.1:1"}):
        t0 = time.monotonic()
        with pytest.raises(ClusterError, match="no Ray cluster answers at '127.0.0.1:1'"):
            check_submission(fits)
        assert time.monotonic() - t0 < 10
