"""The job store: a SQLite (WAL) index plus one folder per job under QHYBRID_HOME.

Layout of ``$QHYBRID_HOME/jobs/<name>/``: see ``contract`` (``spec.json``,
``state.json``, ``source/``, ``input/<channel>/``, ``hyperparameters.json``,
``results/``, ``checkpoints/``, ``logs/``, ``metrics.jsonl``). Folders are
0700 and files 0600. The index row holds the state, its timestamps, the
supervisor's pid, start time and heartbeat, the failure reason and the bill;
the job folder holds the same state in ``state.json``, so an index that is
missing, truncated or garbage is rebuilt from the folders (``repair``).

The index itself (rows, paths, connections) is ``index``, re-exported here; this module
adds what spans the index and the folders: creating, deleting and repairing jobs,
reading their spec.
"""
from __future__ import annotations

import json
import os
import shutil
import uuid
from contextlib import closing
from dataclasses import replace
from pathlib import Path

from qhybrid.errors import JobError, SpecError
from qhybrid.jobs import contract, index, recovery
from qhybrid.jobs import state as job_state
from qhybrid.jobs.index import (  # noqa: F401  (re-exported: the index's old home)
    COLUMNS,
    TMP_PREFIX,
    _READY,
    connect,
    ensure_home,
    exists,
    get,
    home,
    insert,
    job_dir,
    jobs_root,
    lock_timeout,
    processes,
    rows,
    sweep,
    update_if,
    delete_row,
    _has_row,
)
from qhybrid.jobs.spec import JobSpec
from qhybrid.jobs.states import ACTIVE, STATES, TERMINAL, JobState  # noqa: F401  (re-exported)


def _private_tree(root: Path) -> None:
    """Folders 0700, files 0600 (0700 when the owner could execute them)."""
    for dirpath, dirnames, filenames in os.walk(root):
        os.chmod(dirpath, contract.DIR_MODE)
        for f in filenames:
            p = os.path.join(dirpath, f)
            if not os.path.islink(p):
                os.chmod(p, contract.DIR_MODE if os.stat(p).st_mode & 0o100 else contract.FILE_MODE)


def create(spec, populate) -> Path:
    """Build the job folder in a temp folder with ``populate(folder)``, rename it into place, add its row.

    A killed submission leaves only a temp folder, which ``clean_stale`` removes; on any failure
    the folder and the row are removed: a rejected job leaves nothing.

    Raises:
        SpecError: when the name is taken.
    """
    root = ensure_home() / "jobs"
    recovery.clean_stale(root)
    final = root / spec.name
    if final.exists() or _has_row(spec.name):  # (opens the index first: a new store adopts no folder)
        raise SpecError(f"job name {spec.name!r} is already taken; choose another or omit it")
    tmp = root / f"{TMP_PREFIX}{os.getpid()}-{spec.name}-{uuid.uuid4().hex[:8]}"
    recovery.LIVE_TMPS.add(str(tmp))
    placed = False
    try:
        tmp.mkdir(mode=contract.DIR_MODE)
        for sub in contract.SUBFOLDERS:
            (tmp / sub).mkdir(mode=contract.DIR_MODE)
        populate(tmp)
        contract.write_atomic(tmp / contract.SPEC_FILE, spec.to_json())
        contract.write_atomic(tmp / contract.METRICS_FILE, "")
        contract.write_atomic(tmp / contract.STATE_FILE, json.dumps(
            {"state": JobState.QUEUED.value, "created": spec.created}))
        _private_tree(tmp)
        try:
            tmp.rename(final)
        except OSError:
            raise SpecError(f"job name {spec.name!r} is already taken; choose another or omit it") from None
        placed = True
        insert(spec)
    except BaseException:
        shutil.rmtree(final if placed else tmp, ignore_errors=True)
        raise
    finally:
        recovery.LIVE_TMPS.discard(str(tmp))
    return final


def update(name: str, **fields) -> None:
    """Set some columns of a job's row (never its state: see ``state.transition``)."""
    if not fields:
        return
    if "state" in fields:
        raise ValueError("a job's state changes only through qhybrid.jobs.state.transition")
    cols = ", ".join(f"{k}=?" for k in fields)
    with closing(connect()) as conn:
        conn.execute(f"UPDATE jobs SET {cols} WHERE name=?", (*fields.values(), name))
    if {"supervisor_pid", "supervisor_start"} & set(fields):
        job_state.record(name)


def transition(name: str, to_state: str, *, from_states=None, **fields) -> bool:
    """Alias of ``state.transition`` (kept for callers of the old name)."""
    return job_state.transition(name, to_state, from_states=from_states, **fields)


def delete(name: str) -> None:
    """Remove a job's row and folder (the row first: a locked index leaves the job whole)."""
    get(name)
    delete_row(name)
    shutil.rmtree(job_dir(name), ignore_errors=True)


def load_spec(name: str):
    """Read a job's spec from its folder: ``spec.json`` plus ``hyperparameters.json``.

    Raises:
        JobError: when the folder or ``spec.json`` is missing or damaged (one line).
    """
    folder = job_dir(name)
    try:
        text = (folder / contract.SPEC_FILE).read_text(encoding="utf-8")
        spec = JobSpec.from_json(text)
    except FileNotFoundError:
        what = "its folder is missing" if not folder.is_dir() else f"{contract.SPEC_FILE} is missing"
        raise JobError(f"job {name!r} is damaged: {what} ({folder})") from None
    except (OSError, ValueError, TypeError) as err:
        raise JobError(f"job {name!r} is damaged: {contract.SPEC_FILE} is unreadable ({err})") from None
    if not spec.hyperparameters:
        try:
            hp = json.loads((folder / contract.HP_FILE).read_text(encoding="utf-8"))
            if isinstance(hp, dict):
                spec = replace(spec, hyperparameters=hp)
        except (OSError, ValueError):
            pass
    return spec


def repair() -> dict:
    """Rebuild the index from the job folders: set aside an unreadable index, add a row for every
    folder without one, remove half-made submissions. Returns what was done."""
    root = ensure_home()
    path = root / "index.db"
    with recovery.index_lock(path):
        index._READY.discard(str(path))
        damaged = recovery.set_aside(path)
    with closing(connect()) as conn:
        added = recovery.adopt_folders(conn, jobs_root())
        missing = [r[0] for r in conn.execute("SELECT name FROM jobs") if not job_dir(r[0]).is_dir()]
    return {"index_rebuilt": damaged, "rows_added": added, "stale_submissions_removed": clean_stale(),
            "jobs_without_folder": missing}


def clean_stale() -> int:
    """Remove half-made submissions (see ``recovery.clean_stale``)."""
    return recovery.clean_stale(jobs_root())
