"""Which Ray cluster a job runs on: an address the user gave, or a local one we manage.

Address resolution (first that is set): the job's ``--address`` (``spec.extra
["ray_address"]``), ``$QHYBRID_RAY_ADDRESS``, ``$RAY_ADDRESS``, else the local
cluster recorded under ``$QHYBRID_HOME/ray/cluster.json``, started on first use.

The local cluster is one ``ray start --head --block`` process in its own
session, bound to 127.0.0.1, with every port chosen free; it outlives the CLI
call that started it so that many detached job supervisors (a sweep) share it,
and ends with ``python -m qhybrid.jobs.backends.ray.cluster stop``.

    python -m qhybrid.jobs.backends.ray.cluster start [--num-cpus N]
    python -m qhybrid.jobs.backends.ray.cluster status
    python -m qhybrid.jobs.backends.ray.cluster stop
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from qhybrid.errors import ClusterError
from qhybrid.jobs import procs, store

START_TIMEOUT_S = 90.0
LOOPBACK = "127.0.0.1"
#: Environment of every Ray process we start: loopback only, no log dedup, no telemetry.
RAY_ENV = {
    # Ray rewrites 127.0.0.1 to the machine's outward IP unless it believes it runs on a
    # single-node platform; this keeps every Ray server of a local cluster on loopback.
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_DEDUP_LOGS": "0",
    "RAY_USAGE_STATS_ENABLED": "0",
    # `ray start --block` otherwise waits up to 30 s on SIGTERM to drain the node.
    "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0",
    # Ray's memory monitor kills workers when the *machine* is nearly full, whoever
    # uses the memory; a local cluster shares its machine, so jobs fail only on their own.
    "RAY_memory_monitor_refresh_ms": "0",
}


@dataclass(frozen=True)
class LocalCluster:
    """A local Ray head started by qhybrid: its GCS address and the process that owns it."""

    address: str
    pid: int
    start: str | None
    temp_dir: str
    num_cpus: int
    log: str
    client_port: int | None = None  # Ray Client: ray://127.0.0.1:<client_port>

    def alive(self) -> bool:
        """Return True if the head process still runs and its GCS port answers."""
        if not procs.alive(self.pid, self.start):
            return False
        host, port = self.address.rsplit(":", 1)
        with contextlib.suppress(OSError), socket.create_connection((host, int(port)), timeout=1.0):
            return True
        return False


def cluster_dir() -> Path:
    return store.home() / "ray"


def _record_path() -> Path:
    return cluster_dir() / "cluster.json"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def _locked():
    """Hold an exclusive lock on this QHYBRID_HOME's cluster record (across processes)."""
    cluster_dir().mkdir(parents=True, exist_ok=True)
    with open(cluster_dir() / "cluster.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def read_record() -> LocalCluster | None:
    """Return the recorded local cluster (alive or not), or None."""
    try:
        data = json.loads(_record_path().read_text(encoding="utf-8"))
        known = {f.name for f in fields(LocalCluster)}
        return LocalCluster(**{k: v for k, v in data.items() if k in known})
    except (FileNotFoundError, ValueError, TypeError):
        return None


def _write_record(cluster: LocalCluster) -> None:
    tmp = _record_path().with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(cluster), indent=1), encoding="utf-8")
    os.replace(tmp, _record_path())


def _ray_executable() -> str:
    beside = Path(sys.executable).with_name("ray")
    found = str(beside) if beside.exists() else shutil.which("ray")
    if not found:
        raise ClusterError("the 'ray' command is not installed; pip install 'qhybrid[ray]'")
    return found


def start_local_cluster(*, num_cpus: int | None = None, num_gpus: int | None = None,
                        object_store_mb: int | None = None) -> LocalCluster:
    """Start a Ray head on 127.0.0.1 that outlives this process; record and return it.

    Args:
        num_cpus: CPUs the cluster offers (default ``$QHYBRID_RAY_NUM_CPUS`` or all cores).
        num_gpus: GPUs it offers (default: what Ray detects).
        object_store_mb: object store size (default ``$QHYBRID_RAY_OBJECT_STORE_MB`` or 512).

    Raises:
        ClusterError: when ray is missing or the head does not come up.
    """
    num_cpus = int(num_cpus or os.environ.get("QHYBRID_RAY_NUM_CPUS") or os.cpu_count() or 1)
    store_mb = int(object_store_mb or os.environ.get("QHYBRID_RAY_OBJECT_STORE_MB") or 512)
    # Ray's unix socket paths must stay short: a temp folder named after this home.
    tag = hashlib.sha1(str(store.home()).encode()).hexdigest()[:8]
    temp_dir = Path(tempfile.gettempdir()) / f"qhray-{tag}-{os.getpid()}"
    cluster_dir().mkdir(parents=True, exist_ok=True)
    log = cluster_dir() / "head.log"
    gcs_port, client_port = _free_port(), _free_port()
    argv = [
        _ray_executable(), "start", "--head", "--block",
        "--node-ip-address", LOOPBACK, "--port", str(gcs_port),
        "--num-cpus", str(num_cpus), "--object-store-memory", str(store_mb * 1024 * 1024),
        "--include-dashboard", "false", "--disable-usage-stats",
        "--ray-client-server-port", str(client_port),
        "--dashboard-agent-listen-port", str(_free_port()),
        "--temp-dir", str(temp_dir),
    ]
    if num_gpus is not None:
        argv += ["--num-gpus", str(num_gpus)]
    # Ray's own metrics servers default to fixed ports (44217, 44227): free ones avoid clashes.
    env = {**os.environ, **RAY_ENV, "AUTOSCALER_METRIC_PORT": str(_free_port()),
           "DASHBOARD_METRIC_PORT": str(_free_port())}
    env.pop("RAY_ADDRESS", None)
    offset = log.stat().st_size if log.exists() else 0  # earlier heads' lines stay in the log
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            argv, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True, close_fds=True,
        )
    cluster = LocalCluster(
        address=f"{LOOPBACK}:{gcs_port}", pid=proc.pid, start=procs.start_time(proc.pid),
        temp_dir=str(temp_dir), num_cpus=num_cpus, log=str(log), client_port=client_port,
    )
    return _wait_for_head(proc, cluster, log, offset)


def _wait_for_head(proc: subprocess.Popen, cluster: LocalCluster, log: Path, offset: int) -> LocalCluster:
    """``cluster`` once its head answers and has logged its start (past ``offset`` in ``log``), recorded.

    Raises:
        ClusterError: the head exited (the log's last lines) or did not start within ``START_TIMEOUT_S``.
    """
    def new_log() -> str:
        with open(log, "rb") as f:
            f.seek(offset)
            return f.read().decode("utf-8", "replace")

    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = new_log().splitlines()[-5:]
            raise ClusterError(f"the local Ray head exited with code {proc.returncode}: " + " | ".join(tail))
        if cluster.alive() and "--block" in new_log():
            _write_record(cluster)
            return cluster
        time.sleep(0.2)
    _stop(cluster)
    raise ClusterError(f"the local Ray head did not start within {START_TIMEOUT_S:g} s; see {log}")


def ensure_local_cluster() -> LocalCluster:
    """Return this QHYBRID_HOME's live local cluster, starting one if there is none."""
    with _locked():
        cluster = read_record()
        if cluster is not None and cluster.alive():
            return cluster
        if cluster is not None:
            _stop(cluster)
        return start_local_cluster()


def _stop(cluster: LocalCluster, timeout: float = 20.0) -> None:
    if procs.alive(cluster.pid, cluster.start):
        # `ray start --block` ends the Ray processes it started on SIGTERM; SIGKILL the rest.
        with contextlib.suppress(ProcessLookupError):
            os.kill(cluster.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and procs.alive(cluster.pid, cluster.start):
            time.sleep(0.1)
        procs.signal_group(cluster.pid, signal.SIGKILL)
    shutil.rmtree(cluster.temp_dir, ignore_errors=True)


def stop_local_cluster() -> bool:
    """Stop this QHYBRID_HOME's local cluster (and every job running on it). True if one ran."""
    with _locked():
        cluster = read_record()
        if cluster is None:
            return False
        running = cluster.alive()
        _stop(cluster)
        _record_path().unlink(missing_ok=True)
        return running


def resolve_address(explicit: str | None = None) -> str:
    """Return the cluster address for a job: explicit, env, or the local cluster (started if needed)."""
    for value in (explicit, os.environ.get("QHYBRID_RAY_ADDRESS"), os.environ.get("RAY_ADDRESS")):
        if value:
            return value
    return ensure_local_cluster().address


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Raise ClusterError at once when nothing listens at a ``HOST:PORT`` address (Ray would retry ~40 s)."""
    if "://" in address or ":" not in address:
        return
    host, port = address.rsplit(":", 1)
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except (OSError, ValueError) as err:
        raise ClusterError(
            f"no Ray cluster answers at {address!r} ({err}); give the head's GCS address HOST:PORT "
            "as printed by 'ray start --head' (default port 6379), 'ray://HOST:10001' or 'auto'"
        ) from None


def gcs_nodes(address: str, timeout: float = 10.0) -> list[dict] | None:
    """Return ``[{"CPU": c, "GPU": g}]`` of the live nodes at a ``HOST:PORT`` GCS address.

    Asks the GCS directly, without joining the cluster as a driver. Returns
    None where that is not possible (Ray Client or ``auto`` addresses, a Ray
    without this internal API); the caller then checks at connection time.

    Raises:
        ClusterError: when nothing answers at the address.
    """
    if "://" in address or ":" not in address:
        return None
    check_reachable(address, timeout=min(timeout, 5.0))
    try:
        from ray._raylet import GcsClient
    except ImportError:  # pragma: no cover - internal API moved
        return None
    try:
        infos = GcsClient(address=address).get_all_node_info(timeout=timeout)
    except (TypeError, AttributeError):  # pragma: no cover - another Ray's internal API
        return None
    except Exception as err:  # noqa: BLE001 - many kinds, one meaning
        raise ClusterError(
            f"no Ray cluster answers at {address!r} ({type(err).__name__}); give the head's GCS address "
            "HOST:PORT as printed by 'ray start --head' (default port 6379), or 'ray://HOST:10001'"
        ) from None
    nodes = []
    for info in infos.values():
        if getattr(info, "state", 0) != 0:  # GcsNodeInfo.ALIVE == 0
            continue
        total = dict(info.resources_total)
        nodes.append({"CPU": float(total.get("CPU", 0.0)), "GPU": float(total.get("GPU", 0.0))})
    return nodes


def is_loopback(address: str) -> bool:
    host = address.split("://", 1)[-1].rsplit(":", 1)[0]
    return host in ("127.0.0.1", "localhost", "::1", "[::1]")


def connect(address: str):
    """Connect this process to the cluster at ``address`` as a Ray driver; return the ray module.

    Raises:
        ClusterError: when the cluster cannot be reached.
    """
    check_reachable(address)
    if is_loopback(address):
        os.environ.update(RAY_ENV)
    import ray
    import ray._private.ray_constants as ray_constants

    if is_loopback(address):
        ray_constants.ENABLE_RAY_CLUSTER = False  # in case ray was imported before the env was set
    if ray.is_initialized():
        return ray
    for attempt in range(CLIENT_ATTEMPTS):
        try:
            ray.init(address=address, namespace="qhybrid", log_to_driver=False,
                     logging_level="ERROR")
            return ray
        except Exception as err:  # noqa: BLE001 - ray raises many kinds here
            if attempt + 1 < CLIENT_ATTEMPTS and _transient_client_failure(address, err):
                if ray.is_initialized():  # pragma: no cover - a half-made connection
                    ray.shutdown()
                time.sleep(1.0 + attempt)
                continue
            raise ClusterError(
                f"cannot connect to the Ray cluster at {address!r}: {err}; "
                "give the head's GCS address HOST:PORT (what 'ray start --head' printed), "
                "'ray://HOST:10001' for Ray Client, or 'auto'"
            ) from None
    return ray  # pragma: no cover - the loop returns or raises


#: Connection attempts through Ray Client when the head fails to start this client's server.
CLIENT_ATTEMPTS = 3


def _transient_client_failure(address: str, err: Exception) -> bool:
    """Whether a Ray Client connection failed because the head could not start (or reach) the
    server process it spawns for each client: a busy or briefly port-starved head, seen about
    once in three test runs on our 2-core machines; a new connection gets a new server."""
    text = str(err)
    return address.startswith("ray://") and (
        "Starting Ray client server failed" in text or "Proxy failed to Connect" in text)


def _describe(cluster: LocalCluster) -> str:
    text = f"local Ray cluster at {cluster.address} ({cluster.num_cpus} CPUs), pid {cluster.pid}"
    if cluster.client_port:
        text += f"; Ray Client at ray://{LOOPBACK}:{cluster.client_port}"
    return text


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m qhybrid.jobs.backends.ray.cluster",
                                     description="Manage the local Ray cluster qhybrid starts for --backend ray.")
    parser.add_argument("command", choices=("start", "status", "stop"))
    parser.add_argument("--num-cpus", type=int, default=None)
    args = parser.parse_args(argv)
    if args.command == "start":
        with _locked():
            cluster = read_record()
            if cluster is None or not cluster.alive():
                cluster = start_local_cluster(num_cpus=args.num_cpus)
        print(_describe(cluster))
    elif args.command == "status":
        cluster = read_record()
        if cluster is None or not cluster.alive():
            print("no local Ray cluster running")
            return 1
        print(_describe(cluster))
    else:
        print("stopped the local Ray cluster" if stop_local_cluster() else "no local Ray cluster was running")
    return 0


if __name__ == "__main__":
    sys.exit(main())
