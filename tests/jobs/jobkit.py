"""Helpers for job tests (imported by tests as ``from jobkit import ...``)."""
from __future__ import annotations

import base64
import hashlib
import time
import zipfile
from pathlib import Path

from qhybrid.jobs import procs

CPU = "local:qhybrid/qhybrid.cpu"


def wait_for(predicate, timeout: float = 20.0, step: float = 0.05):
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout} s waiting for {predicate}")


def read_pid(path: Path):
    """Return the int in ``path`` once it is written."""
    return wait_for(lambda: path.exists() and path.read_text().strip() and int(path.read_text()))


def gone(pid: int) -> bool:
    """True once ``pid`` no longer runs (zombies count as gone)."""
    return procs.start_time(pid) is None


def nothing_written(home: Path) -> bool:
    """True when the store holds no job folder and no job row."""
    jobs = home / "jobs"
    if jobs.exists() and any(jobs.iterdir()):
        return False
    if (home / "index.db").exists():
        from qhybrid.jobs import store

        return store.rows() == []
    return True


# A job script that does everything a job can: hyperparameters, input, metrics, checkpoints, result.
FULL_SCRIPT = """
    import os
    from qhybrid.jobs import (hyperparameters, input_dir, log_metric, save_job_checkpoint,
                              save_job_result, device, job_name)

    hp = hyperparameters()
    steps = int(hp.get("steps", "3"))
    data = (input_dir("data") / "numbers.txt").read_text().split() if os.path.isdir(input_dir("data")) else []
    for i in range(steps):
        log_metric("loss", 1.0 / (i + 1), iteration_number=i)
    save_job_checkpoint({"step": steps}, checkpoint_file_suffix="last")
    save_job_result({"steps": steps, "data": data, "device": device(), "name": job_name(),
                     "threads": os.environ.get("OMP_NUM_THREADS")})
"""


def make_wheel(folder: Path, name: str = "qhtinypkg", version: str = "1.0") -> Path:
    """Write a minimal pure-Python wheel (a zip with its dist-info), installable with --no-index."""
    folder.mkdir(parents=True, exist_ok=True)
    dist = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": f"VERSION = {version!r}\n",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: qhybrid-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(f"{dist}/RECORD,,")
    out = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(out, "w") as zf:
        for path, text in files.items():
            zf.writestr(path, text)
        zf.writestr(f"{dist}/RECORD", "\n".join(record) + "\n")
    return out
