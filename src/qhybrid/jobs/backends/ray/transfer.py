"""What crosses between the job folder and a Ray worker: environment, command line, outputs.

The supervisor's ProcessSpecs name this machine's job folder; a worker has its
own temp folder (``{workdir}``) and its own Python (``{python}``).
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from qhybrid.jobs import contract
from qhybrid.jobs.backends.ray.worker import OUTPUT_DIRS, unpack

#: What every rank receives: the job folder's inputs.
SHIPPED = (contract.SOURCE_DIR, contract.INPUT_DIR, contract.CHECKPOINT_DIR, contract.HP_FILE)
#: Variables that describe this machine, not the job: never forwarded to workers.
_MACHINE_VARS = {"CUDA_VISIBLE_DEVICES", "PATH", "HOME", "PWD", "VIRTUAL_ENV", "PYTHONHOME"}


def remote_env(env: dict, folder: Path) -> dict:
    """Return the part of a ProcessSpec's env to set on a worker, job paths as ``{workdir}``.

    That is what the supervisor added to its own environment (the job contract,
    threads, ranks) plus every ``QHYBRID_*`` / ``AMZN_BRAKET_*`` variable.
    """
    here, root = os.environ, str(folder)
    out = {}
    for key, value in env.items():
        if key in _MACHINE_VARS or key.startswith("RAY_"):
            continue
        if key == "PYTHONPATH":
            parts = [p.replace(root, "{workdir}") for p in value.split(os.pathsep) if p.startswith(root)]
            if parts:
                out[key] = os.pathsep.join(parts)
            continue
        if here.get(key) == value and not key.startswith(("QHYBRID_", contract.BRAKET_PREFIX)):
            continue
        out[key] = value.replace(root, "{workdir}")
    return out


def remote_argv(argv: list, folder: Path) -> list:
    """Map the supervisor's command line to the worker's (its python, its workspace)."""
    return ["{python}" if a == sys.executable else str(a).replace(str(folder), "{workdir}") for a in argv]


def remote_cwd(cwd: str, folder: Path) -> str:
    """The working folder relative to the workspace (``source`` unless inside the job folder)."""
    return str(Path(cwd).relative_to(folder)) if str(cwd).startswith(str(folder)) else contract.SOURCE_DIR


def merge_outputs(blobs: dict, folder: Path) -> None:
    """Unpack each rank's results/checkpoints tarball into the job folder, rank 0 last (it wins)."""
    for rank in sorted(blobs, reverse=True):
        with tempfile.TemporaryDirectory(dir=folder, prefix=".ray-out-") as tmp:
            unpack(blobs[rank], Path(tmp))
            for sub in OUTPUT_DIRS:
                src_root = Path(tmp) / sub
                if not src_root.is_dir():
                    continue
                for src in sorted(src_root.rglob("*")):
                    if src.is_file():
                        dest = folder / sub / src.relative_to(src_root)
                        dest.parent.mkdir(parents=True, exist_ok=True)
                        os.replace(src, dest)  # same filesystem: atomic per file
