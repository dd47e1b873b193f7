"""Recovery of the job store: an index rebuilt from the job folders, half-made submissions removed.

An index that is missing, truncated or garbage is set aside (kept as
``index.db.damaged-<time>``) and rebuilt from each folder's ``spec.json`` and
``state.json``; a submission killed while copying leaves only a temp folder
``jobs/.tmp-<pid>-<name>-<hex>``, removed once its process is gone.
``qhybrid jobs repair`` runs ``store.repair``. This module sits below the index (``index``
calls it while opening one) and names no module above it: the folders' root is passed in.
"""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
import uuid
from contextlib import closing
from pathlib import Path

from qhybrid.jobs import contract, procs
from qhybrid.jobs import states as job_state
from qhybrid.jobs.locks import index_lock, lock_timeout  # noqa: F401  (re-exported: recovery.index_lock)
from qhybrid.jobs.states import STATES, JobState

TMP_PREFIX = ".tmp-"


def readable(path: Path) -> bool:
    """True when ``path`` is a sound SQLite index (or absent)."""
    if not path.exists():
        return True
    try:
        with closing(sqlite3.connect(path, timeout=lock_timeout())) as conn:
            ok = conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
            conn.execute("SELECT count(*) FROM jobs").fetchone()
        return ok
    except sqlite3.DatabaseError as err:
        return "locked" in str(err)  # busy is not damaged


def set_aside(path: Path) -> bool:
    """Move a damaged index out of the way (kept for inspection as ``index.db.damaged-<time>``).
    The caller holds :func:`index_lock`; returns whether it was damaged."""
    if readable(path):
        return False
    stamp = time.strftime("%Y%m%dT%H%M%S")
    for suffix in ("", "-wal", "-shm"):
        p = Path(f"{path}{suffix}")
        if p.exists():
            p.rename(p.with_name(f"{p.name}.damaged-{stamp}-{uuid.uuid4().hex[:6]}"))
    return True


def adopt_folders(conn: sqlite3.Connection, root: Path) -> int:
    """Insert a row for every job folder under ``root`` that has none (rebuilding an index); return how many."""
    have = {r[0] for r in conn.execute("SELECT name FROM jobs")}
    added = 0
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        name = folder.name
        if name in have or not folder.is_dir() or not contract.is_job_name(name):
            continue
        row = row_from_folder(folder)
        cols = ", ".join(row)
        conn.execute(f"INSERT OR IGNORE INTO jobs ({cols}) VALUES ({','.join('?' * len(row))})", tuple(row.values()))
        added += 1
    return added


def row_from_folder(folder: Path) -> dict:
    rec = job_state.recorded(folder)
    row = {"name": folder.name, **{k: rec.get(k) for k in job_state.RECORDED}}
    try:
        spec = json.loads((folder / contract.SPEC_FILE).read_text(encoding="utf-8"))
        row.update(device=spec.get("device"), instance_type=spec.get("instance_type"),
                   instance_count=spec.get("instance_count"))
        row["created"] = row["created"] or spec.get("created")
    except (OSError, ValueError, AttributeError):
        pass
    if row["state"] not in {s.value for s in STATES}:
        row.update(state=JobState.FAILED.value, ended=row.get("ended") or time.time(),
                   reason="its state was lost; recovered from its folder when the index was rebuilt")
    row["created"] = row["created"] or folder.stat().st_mtime
    return row


def clean_stale(root: Path) -> int:
    """Remove temp folders under ``root`` of submissions whose process is gone (killed while copying);
    return how many."""
    removed = 0
    for tmp in root.glob(f"{TMP_PREFIX}*") if root.is_dir() else []:
        parts = tmp.name[len(TMP_PREFIX):].split("-", 1)
        pid = int(parts[0]) if parts[0].isdigit() else None
        if pid is None or not procs.alive(pid, None) or (pid == os.getpid() and not _is_live_tmp(tmp)):
            shutil.rmtree(tmp, ignore_errors=True)
            removed += 1
    return removed


LIVE_TMPS: set[str] = set()  # temp folders of submissions under way in this process


def _is_live_tmp(tmp: Path) -> bool:
    return str(tmp) in LIVE_TMPS
