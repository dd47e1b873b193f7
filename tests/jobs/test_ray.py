"""Jobs on a Ray cluster: same results as local, data parallel, cancel, dead workers, sweeps.

One local Ray cluster (2 CPUs, loopback only) serves the whole module; jobs
find it through ``QHYBRID_RAY_ADDRESS``, as detached supervisors would.
"""
from __future__ import annotations

import json
import uuid
import os
import re
import signal
import time
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

pytest.importorskip("ray")

from qhybrid.cli import main  # noqa: E402
from qhybrid.cli import qaoa as qaoa_cli  # noqa: E402
from qhybrid.cli import qml as qml_cli  # noqa: E402
from qhybrid.errors import ClusterError, SpecError  # noqa: E402
from qhybrid.jobs import InstanceConfig, store  # noqa: E402
from qhybrid.submit import Job
from qhybrid.jobs.backends.ray import cluster as ray_cluster  # noqa: E402

pytestmark = [pytest.mark.ray, pytest.mark.timeout(600)]

CPU = "local:qhybrid/qhybrid.cpu"
QAOA_ARGS = ["qaoa", "--nodes", "6", "--edges", "8", "--layers", "2", "--iterations", "3", "--seed", "7"]
QAOA_KWARGS = {"nodes": 6, "edges": 8, "layers": 2, "iterations": 3, "seed": 7}  # the same, for job_kwargs
QML_ARGS = ["qml", "--wires", "4", "--data", "24", "--batch-size", "8", "--epochs", "2", "--seed", "11",
            "--processes-per-instance", "2"]
QML_KWARGS = {"wires": 4, "data": 24, "batch_size": 8, "epochs": 2, "seed": 11, "processes_per_instance": 2}
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


def _wait_log(job: Job, pattern: str, timeout: float = 180.0) -> re.Match:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(pattern, job.logs())
        if found:
            return found
        assert job.state() in ("QUEUED", "RUNNING"), job.describe()
        time.sleep(0.1)
    raise AssertionError(f"{pattern!r} not in the log of {job.name}:\n{job.logs()}")


def _run_cli(argv, capsys) -> dict:
    """Run ``qhybrid ARGV --json`` in this process; return {"job": its name, "result": its result}."""
    capsys.readouterr()
    name = f"ray-cli-{uuid.uuid4().hex[:8]}"
    code = main([*argv, "--name", name, "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return {"job": name, "result": json.loads(out.out)["result"]}


def test_qaoa_on_ray_gives_the_same_result_as_local(cluster, capsys):
    local = Job.create(**qaoa_cli.job_kwargs(**QAOA_KWARGS), in_process=True)
    out = _run_cli([*QAOA_ARGS, "--backend", "ray", "--address", cluster.address], capsys)
    job = Job.get(out["job"])
    assert job.state() == "COMPLETED" and job.spec().backend == "ray"
    ours, theirs = job.result(), local.result()
    assert ours["best_bitstring"] == theirs["best_bitstring"]
    for key in ("params", "energy", "best_value", "optimum"):
        np.testing.assert_allclose(ours[key], theirs[key], atol=1e-12, rtol=0, err_msg=key)
    np.testing.assert_allclose(job.metrics()["energy"], local.metrics()["energy"], atol=1e-12, rtol=0)
    assert f"placed on the Ray cluster at {cluster.address}" in job.logs()


def test_two_rank_data_parallel_qml_on_ray_matches_local_data_parallel(cluster, capsys):
    local = Job.create(**qml_cli.job_kwargs(**QML_KWARGS))  # runs meanwhile
    out = _run_cli([*QML_ARGS, "--backend", "ray"], capsys)  # the address from QHYBRID_RAY_ADDRESS
    job = Job.get(out["job"])
    local.wait(timeout=180)
    assert local.state() == "COMPLETED", local.describe()["failure_reason"]
    result, expected = job.result(), local.result()
    assert result["world_size"] == expected["world_size"] == 2
    np.testing.assert_allclose(result["losses"], expected["losses"], atol=1e-10, rtol=0)
    np.testing.assert_allclose(job.metrics(metric_type="iteration_number")["Loss"], expected["losses"],
                               atol=1e-10, rtol=0)
    checkpoints = sorted(p.name for p in (store.job_dir(job.name) / "checkpoints").iterdir())
    assert checkpoints == [f"{job.name}_qml.json"]
    assert (store.job_dir(job.name) / "logs" / "rank-1.log").exists() and not job.metrics(rank=1)


def test_checkpoints_come_home_while_running_and_cancel_stops_the_actors(cluster, write_script):
    client = f"ray://127.0.0.1:{cluster.client_port}"  # through Ray Client, as from outside a cluster
    job = Job.create(CPU, str(write_script("slow.py", SLOW)), backend="ray", address=client)
    pid = int(_wait_log(job, r"actor-pid=(\d+)").group(1))
    checkpoint = store.job_dir(job.name) / "checkpoints" / f"{job.name}.json"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not checkpoint.exists():
        time.sleep(0.2)
    assert checkpoint.exists() and job.state() == "RUNNING"  # synced while the job runs
    assert job.cancel() == "CANCELLED"
    assert job.describe()["failure_reason"] == "cancelled on request"
    assert checkpoint.exists() and f"placed on the Ray cluster at {client}" in job.logs()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
        time.sleep(0.1)
    assert not Path(f"/proc/{pid}").exists(), "the rank's actor outlived the cancel"


def test_a_killed_worker_fails_the_job(cluster, write_script):
    job = Job.create(CPU, str(write_script("slow.py", SLOW)), backend="ray")
    pid = int(_wait_log(job, r"actor-pid=(\d+)").group(1))
    os.kill(pid, signal.SIGKILL)
    assert job.wait(timeout=60).state() == "FAILED"
    assert job.describe()["failure_reason"].startswith("worker died: ")


def test_what_the_cluster_can_never_fit_is_refused_at_submission_or_fails_the_job(cluster, write_script):
    script = str(write_script("tiny.py", "print('hi')\n"))
    too_big = dict(backend="ray", distribution="data_parallel", instance_config=InstanceConfig(instanceCount=3))
    with pytest.raises(ClusterError, match="3 x ml.m5.large needs at least one CPU per instance"):
        Job.create(CPU, script, **too_big)
    assert Job.list() == []  # nothing written
    # where the submission cannot check (ray:// or auto addresses), the supervisor finds out
    with mock.patch("qhybrid.jobs.backends.ray.check_submission"):
        job = Job.create(CPU, script, **too_big)
    assert job.wait(timeout=60).state() == "FAILED"
    assert job.describe()["failure_reason"].startswith("ClusterError: 3 x ml.m5.large needs at least one CPU")


def test_a_sweep_returns_at_once_and_jobs_wait_queued_for_room(cluster, write_script, capsys):
    script = write_script("step.py", """
        import time
        from qhybrid.jobs import save_job_result
        start = time.time(); time.sleep(1.0)
        save_job_result({"start": start, "end": time.time()})
    """)
    names = []
    t0 = time.monotonic()
    for i in range(2):  # each takes the whole 2-CPU cluster
        assert main(["run", str(script), "--backend", "ray", "--instance", "ml.m5.2xlarge",
                     "--hp", f"i={i}", "--no-wait"]) == 0
        names.append(capsys.readouterr().out.strip())
    assert time.monotonic() - t0 < 15  # submission does not wait for the cluster
    jobs = [Job.get(n).wait(timeout=120) for n in names]
    assert [j.state() for j in jobs] == ["COMPLETED", "COMPLETED"]
    spans = sorted(((j.result()["start"], j.result()["end"], j) for j in jobs), key=lambda t: t[0])
    (s1, e1, _), (s2, e2, second) = spans
    assert s2 >= e1 - 0.05  # one after the other
    assert store.get(second.name)["started"] >= e1 - 0.05  # QUEUED, not RUNNING (nor billed), while waiting


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


def test_submission_refuses_dead_addresses_at_once_and_address_needs_ray(cluster, write_script):
    script = str(write_script("tiny.py", "print('hi')\n"))
    t0 = time.monotonic()
    with pytest.raises(ClusterError, match="no Ray cluster answers at '127.0.0.1:1'"):
        Job.create(CPU, script, backend="ray", address="127.0.0.1:1")
    assert time.monotonic() - t0 < 10 and Job.list() == []
    with pytest.raises(SpecError, match="needs backend='ray'"):
        Job.create(CPU, script, address=cluster.address)


def test_a_dead_node_or_worker_is_reported_as_worker_died_and_busy_ones_are_waited_for():
    import types

    import ray.exceptions as rex

    from qhybrid.jobs.backends.ray import DIED_CODE, Backend

    class FakeRay:
        def get(self, ref, timeout):
            if isinstance(ref, Exception):
                raise ref
            return ref

    def actor(result):
        return types.SimpleNamespace(poll=types.SimpleNamespace(remote=lambda: result))

    backend, lines = Backend(), []
    backend._on_line, backend._ray = (lambda rank, line: lines.append((rank, line))), FakeRay()
    backend._codes = {0: None, 1: None, 2: None}
    backend._poll_once({0: actor(([("stdout", "hi")], None)),
                        1: actor(rex.NodeDiedError("the node 7f3a running this worker died")),
                        2: actor(rex.GetTimeoutError("busy"))})
    assert backend.poll() == {0: None, 1: DIED_CODE, 2: None}
    assert backend.failure_reason(1) == "worker died: the node 7f3a running this worker died"
    assert lines == [(0, "hi"), (1, "qhybrid: worker died: the node 7f3a running this worker died")]


def test_ray_client_connection_retried_when_the_head_cannot_start_its_server(monkeypatch):
    """Ray Client: the head spawns a server process per client, which can fail to start on a busy
    head ("Starting Ray client server failed"): connect tries again; other errors fail at once."""
    import ray

    calls = []

    def init(**kw):
        calls.append(kw["address"])
        if len(calls) < fail_times:
            raise RuntimeError("Initialization failure from server: ... Starting Ray client server failed. See ...")

    monkeypatch.setattr(ray, "init", init)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray_cluster.time, "sleep", lambda s: None)
    address = "ray://10.0.0.9:10001"
    fail_times = 2
    assert ray_cluster.connect(address) is ray and calls == [address, address]
    calls.clear()
    fail_times = ray_cluster.CLIENT_ATTEMPTS + 1
    with pytest.raises(ClusterError, match="Starting Ray client server failed"):
        ray_cluster.connect(address)
    assert len(calls) == ray_cluster.CLIENT_ATTEMPTS

    def refused(**kw):
        calls.append(kw["address"])
        raise ConnectionError("connection refused")

    calls.clear()
    monkeypatch.setattr(ray, "init", refused)
    with pytest.raises(ClusterError, match="connection refused"):
        ray_cluster.connect(address)
    assert len(calls) == 1
