"""What a job ran with, recorded as ``environment.json`` in its folder at submission: package
versions, Python, host, CPU model, GPUs and CUDA, threads, the git commits of qhybrid and of the
job's source, the command line. A speed claim or a bug report is then reproducible from the folder.

Cheap on purpose (it runs in the submitting process, on the way to every job): versions come
from package metadata, nothing heavy is imported, external commands have short timeouts.
"""
from __future__ import annotations

import json
import os
import platform
import socket
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

from qhybrid.devices import torch_gpus
from qhybrid.jobs.script import write_atomic

FILE = "environment.json"
PACKAGES = ("qhybrid", "torch", "pennylane", "pennylane-lightning", "numba", "numpy", "ray", "networkx",
            "typer", "rich")
THREAD_VARIABLES = ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS", "MKL_NUM_THREADS", "QHYBRID_TORCH_THREADS",
                    "OMP_WAIT_POLICY")


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else ``platform.processor()``)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def gpus(*, probe_torch: bool = False) -> list[str]:
    """NVIDIA GPUs with driver and memory (``nvidia-smi``); with ``probe_torch``, what torch sees
    when nvidia-smi is absent. Empty without a GPU."""
    try:
        text = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=5).stdout
        found = [line.strip() for line in text.splitlines() if line.strip()]
        if found:
            return found
    except (OSError, subprocess.SubprocessError):
        pass
    return torch_gpus() if probe_torch else []


def git_commit(path: str | os.PathLike | None) -> str | None:
    """The commit of the git work tree holding ``path`` (suffixed ``-dirty`` with changes), or None."""
    if path is None:
        return None
    folder = Path(path).resolve()
    folder = folder if folder.is_dir() else folder.parent
    try:
        head = subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=5)
        if head.returncode:
            return None
        dirty = subprocess.run(["git", "-C", str(folder), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("-dirty" if dirty else "")


def kernel_cache() -> dict:
    """Where numba caches compiled kernels and how much is there."""
    from qhybrid.kernel_cache import cache_dir

    path = cache_dir()
    files = [p for p in path.rglob("*.nb[ci]")] if path.is_dir() else []
    return {"path": str(path), "files": len(files), "bytes": sum(p.stat().st_size for p in files)}


def collect(*, source: str | os.PathLike | None = None, argv: list[str] | None = None,
            cuda_probe: bool = False) -> dict:
    """The environment facts (see the module docstring).

    Args:
        source: the job's source (file or folder), for its git commit.
        argv: the command line (default ``sys.argv``).
        cuda_probe: ask torch about CUDA when nvidia-smi is absent (imports torch).
    """
    import qhybrid

    qhybrid_path = Path(qhybrid.__file__).resolve().parent
    return {
        "recorded": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "packages": {name: _version(name) for name in PACKAGES},
        "python": f"{platform.python_implementation()} {platform.python_version()} ({sys.executable})",
        "platform": platform.platform(),
        "host": socket.gethostname(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "threads": {k: os.environ[k] for k in THREAD_VARIABLES if k in os.environ},
        "gpus": gpus(probe_torch=cuda_probe),
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "qhybrid_path": str(qhybrid_path),
        "git_commit": git_commit(qhybrid_path),
        "source": str(source) if source is not None else None,
        "source_git_commit": git_commit(source),
        "command_line": list(sys.argv if argv is None else argv),
    }


def record(folder: str | os.PathLike, *, source: str | os.PathLike | None = None) -> None:
    """Write ``environment.json`` into a job's folder (atomically; never fails the job)."""
    try:
        write_atomic(Path(folder) / FILE, json.dumps(collect(source=source), indent=2))
    except OSError:  # pragma: no cover - a read-only or vanished folder: the job runs regardless
        pass


def read(folder: str | os.PathLike) -> dict | None:
    """A job's recorded environment, or None when it has none (jobs from before this file existed)."""
    path = Path(folder) / FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
