"""The Ray actor that runs one rank of a job on whatever node Ray placed it.

Nothing here assumes a filesystem shared with the driver: the job's files
arrive as a tarball (bytes), the script runs in a private temp folder with the
job contract's environment, stdout/stderr lines are buffered for the driver to
poll, and results/checkpoints go back as a tarball.

This module is imported inside Ray workers; it must not import the rest of
qhybrid (only the standard library, ray and ``qhybrid.jobs.procs``, itself standard
library only).
"""
from __future__ import annotations

import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections import deque
from pathlib import Path

from qhybrid.jobs import procs

#: Folders shipped back to the driver when the rank ends.
OUTPUT_DIRS = ("results", "checkpoints")


def pack(root: Path, names) -> bytes:
    """Return a gzip tarball of the entries `names` (files or folders) under `root`."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name in names:
            path = Path(root) / name
            if path.exists():
                tar.add(str(path), arcname=name)
    return buf.getvalue()


def unpack(data: bytes, dest: Path) -> None:
    """Extract a tarball made by `pack` into `dest`, refusing paths that escape it."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(str(dest), filter="data")
        else:  # pragma: no cover - Python < 3.11.4
            root = Path(dest).resolve()
            for member in tar.getmembers():
                if not (root / member.name).resolve().is_relative_to(root):
                    raise ValueError(f"unsafe path in tarball: {member.name!r}")
            tar.extractall(str(dest))


def free_port(host: str) -> int:
    """Return a TCP port that is free on `host` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """Start a new process group and ask Linux to SIGKILL us when the actor dies."""
    os.setsid()
    procs.die_with_parent()


WORKSPACE_PREFIX = "qhybrid-rank-"


def _descendants() -> list[int]:
    """Pids of this process's live descendants, from /proc (standard library only)."""
    parent = {}
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []
    for entry in entries:
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] not in ("Z", "X"):
            parent[int(entry)] = int(fields[1])
    out, todo = [], [os.getpid()]
    while todo:
        pid = todo.pop()
        kids = [p for p, pp in parent.items() if pp == pid]
        out += kids
        todo += kids
    return out


def end_descendants(keep=()) -> int:
    """SIGKILL every descendant of this actor but ``keep`` (repeatedly: forks in between are caught)
    and reap the orphans among them; return how many were found."""
    keep = set(keep)
    found = 0
    for _ in range(20):
        victims = [p for p in _descendants() if p not in keep]
        if not victims:
            break
        found += len(victims)
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.05)
        for pid in victims:
            try:
                os.waitpid(pid, os.WNOHANG)
            except (ChildProcessError, OSError):
                pass
    return found


def _sweep_stale_workspaces() -> None:
    """Remove workspaces on this node whose actor died without cleaning up (killed worker)."""
    for path in Path(tempfile.gettempdir()).glob(f"{WORKSPACE_PREFIX}*-*"):
        pid = path.name[len(WORKSPACE_PREFIX):].split("-", 1)[0]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
        except OSError:
            continue


class RankRunner:
    """Run one rank's process in a private workspace and buffer its output lines.

    The actor is single-threaded from Ray's point of view (every method returns
    at once); a reader thread fills the line buffer (stdout and stderr merged).
    """

    def __init__(self, *, subreaper: bool = True) -> None:
        self._subreaper = subreaper  # False when run as a plain object in someone else's process (tests)
        self._foreign: set[int] = set()  # this process's descendants before the rank started: not ours
        self._proc: subprocess.Popen | None = None
        self._store = self._store_socket = None  # the rendezvous store, when this actor hosts it
        self._lines: deque = deque()
        self._readers: list[threading.Thread] = []
        self._workdir: Path | None = None
        self._shipped: dict[str, tuple] = {}

    def node(self) -> dict:
        """Return where this actor runs: node IP, a free port there, pid, GPU ids."""
        import ray

        ip = ray.util.get_node_ip_address()
        return {
            "ip": ip,
            "port": free_port(ip),
            "pid": os.getpid(),
            "gpu_ids": [str(g) for g in ray.get_gpu_ids()],
        }

    def host_store(self, ip: str) -> int:
        """Host the job's torch.distributed store in this actor, listening on ``ip`` only (the
        interface the backend chose), not on every interface as a rank 0 TCPStore would; return
        its port. Ranks reach it through ``env://`` with ``TORCHELASTIC_USE_AGENT_STORE=True``.

        Raises:
            ImportError: without torch (the caller then lets rank 0 host the store).
        """
        import datetime

        from torch.distributed import TCPStore

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind((ip, 0))
        sock.listen(512)
        port = sock.getsockname()[1]
        self._store = TCPStore(ip, port, None, True, timeout=datetime.timedelta(minutes=30),
                               wait_for_workers=False, master_listen_fd=sock.fileno())
        self._store_socket = sock
        return port

    def start(self, bundle: bytes, *, env: dict, argv: list, cwd: str = "source") -> str:
        """Unpack `bundle` into a temp folder and start `argv` there with `env` added.

        Args:
            bundle: tarball (from `pack`) of the job's source/, input/, checkpoints/,
                hyperparameters.json.
            env: variables set on top of the actor's environment; ``{workdir}`` in a
                value becomes the workspace; PYTHONPATH is prepended to the actor's.
            argv: the command; ``{python}`` becomes this interpreter, ``{workdir}``
                the workspace.
            cwd: folder of the workspace to run in.

        Returns:
            The workspace path on the worker node (for diagnostics).
        """
        _sweep_stale_workspaces()
        if self._subreaper:
            procs.become_subreaper()
        self._foreign = set(_descendants())
        self._workdir = Path(tempfile.mkdtemp(prefix=f"{WORKSPACE_PREFIX}{os.getpid()}-"))
        workdir = str(self._workdir)
        unpack(bundle, self._workdir)
        for name in ("input", *OUTPUT_DIRS):
            (self._workdir / name).mkdir(exist_ok=True)
        self.new_outputs()  # checkpoints copied in from an earlier job are not news
        full_env = dict(os.environ)
        for key, value in env.items():
            value = str(value).replace("{workdir}", workdir)
            if key == "PYTHONPATH" and full_env.get(key):
                value = value + os.pathsep + full_env[key]
            full_env[key] = value
        full_env.setdefault("PYTHONUNBUFFERED", "1")
        argv = [sys.executable if a == "{python}" else str(a).replace("{workdir}", workdir) for a in argv]
        self._proc = subprocess.Popen(
            argv,
            cwd=str(self._workdir / cwd),
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,  # one ordered stream, as the local backend records it
            preexec_fn=_die_with_parent,
        )
        reader = threading.Thread(target=self._read, args=("stdout", self._proc.stdout), daemon=True)
        reader.start()
        self._readers.append(reader)
        return workdir

    def _read(self, stream_name: str, stream) -> None:
        for raw in iter(stream.readline, b""):
            self._lines.append((stream_name, raw.decode("utf-8", "replace").rstrip("\r\n")))
        stream.close()

    def poll(self, max_lines: int = 5000) -> tuple[list, int | None]:
        """Return (new output lines as (stream, text), exit code or None while running).

        The exit code is only reported once every line before it was returned.
        """
        code = self._proc.poll() if self._proc else None
        if code is not None:
            self._end_left_behind()  # what the rank left running would hold its output open
            for reader in self._readers:
                reader.join(timeout=2.0)
        lines = []
        while self._lines and len(lines) < max_lines:
            lines.append(self._lines.popleft())
        if self._lines:
            code = None
        return lines, code

    def new_outputs(self) -> bytes | None:
        """Return a tarball of the output files changed since the last call, or None."""
        if self._workdir is None:
            return None
        changed = []
        for sub in OUTPUT_DIRS:
            for path in sorted((self._workdir / sub).rglob("*")):
                if not path.is_file() or path.name.startswith("."):
                    continue
                stat = path.stat()
                key = str(path.relative_to(self._workdir))
                if self._shipped.get(key) != (stat.st_mtime_ns, stat.st_size):
                    self._shipped[key] = (stat.st_mtime_ns, stat.st_size)
                    changed.append(key)
        return pack(self._workdir, changed) if changed else None

    def outputs(self) -> bytes:
        """Return a tarball of this rank's results/ and checkpoints/ folders."""
        if self._workdir is None:
            return pack(Path("."), ())
        return pack(self._workdir, OUTPUT_DIRS)

    def kill(self, grace: float = 3.0) -> int | None:
        """Stop the rank's process group (SIGTERM, then SIGKILL after `grace` seconds)."""
        proc = self._proc
        if proc is None or proc.poll() is not None:
            self._end_left_behind()
            return proc.poll() if proc else None
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + wait
            while proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            if proc.poll() is not None:
                break
        self._end_left_behind()
        return proc.poll()

    def _end_left_behind(self) -> int:
        """End the processes the rank started that are still running (re-parented here as orphans
        when this actor is their subreaper)."""
        if self._proc is None:
            return 0
        return end_descendants(keep=self._foreign | {self._proc.pid})

    def cleanup(self) -> None:
        """Remove the workspace (call after `outputs`)."""
        self.kill(grace=0.5)
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None
