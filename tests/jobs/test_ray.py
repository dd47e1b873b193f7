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
    """The local Ray cluster qhybrid starts on first use (2 CPUs), shared by this module.

    Started the way a job without ``--address`` starts it, stopped (and checked
    gone) at the end; jobs find it through ``QHYBRID_RAY_ADDRESS`` because each
    test has its own QHYBRID_HOME.
    """
    home = tmp_path_factory.mktemp("ray-cluster-home")
    settings = {"QHYBRID_HOME": str(home), "QHYBRID_RAY_NUM_CPUS": "2", "QHYBRID_RAY_OBJECT_STORE_MB": "200"}
    with mock.patch.dict(os.environ, settings):
        head = ray_cluster.ensure_local_cluster()
    try:
        with mock.patch.dict(os.environ, {"QHYBRID_RAY_ADDRESS": head.address}):
            yield head
    finally:
        with mock.patch.dict(os.environ, {"QHYBRID_HOME": str(home)}):
            assert ray_cluster.stop_local_cluster()
            assert ray_cluster.read_record() is None and not ray_cluster.stop_local_cluster()
        assert not head.alive()
        assert not Path(head.temp_dir).exists()


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


def test_the_local_cluster_is_recorded_bound_to_loopback_and_reused(cluster):
    home = Path(cluster.log).parent.parent
    with mock.patch.dict(os.environ, {"QHYBRID_HOME": str(home), "QHYBRID_RAY_ADDRESS": "", "RAY_ADDRESS": ""}):
        assert ray_cluster.read_record() == cluster
        assert ray_cluster.ensure_local_cluster().pid == cluster.pid  # reused, not restarted
        assert ray_cluster.resolve_address() == cluster.address
        assert ray_cluster.resolve_address("10.0.0.5:6379") == "10.0.0.5:6379"
    assert cluster.address.startswith("127.0.0.1:") and cluster.num_cpus == 2
    ports = _listening_ports_of_session(cluster.pid)
    assert ports and all(host in ("127.0.0.1", "::ffff:127.0.0.1") for host, _ in ports), ports


def _listening_ports_of_session(sid: int) -> list[tuple[str, int]]:
    """(host, port) of every TCP socket listened on by a process of session ``sid`` (Linux /proc)."""
    inodes = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.getsid(int(entry)) != sid:
                continue
            for fd in os.listdir(f"/proc/{entry}/fd"):
                target = os.readlink(f"/proc/{entry}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    found = []
    for table, v6 in (("/proc/net/tcp", False), ("/proc/net/tcp6", True)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] != "0A" or fields[9] not in inodes:  # 0A: LISTEN
                continue
            addr, port = fields[1].split(":")
            found.append((_decode_ip(addr, v6), int(port, 16)))
    return found


def _decode_ip(hexaddr: str, v6: bool) -> str:
    import ipaddress

    raw = bytes.fromhex(hexaddr)
    if not v6:
        return str(ipaddress.IPv4Address(raw[::-1]))
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
    ip = ipaddress.IPv6Address(words)
    return str(ip.ipv4_mapped and f"::ffff:{ip.ipv4_mapped}" or ip)


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
