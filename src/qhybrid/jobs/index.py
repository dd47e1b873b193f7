"""The job index: a SQLite (WAL) table of job rows under QHYBRID_HOME, and the store's paths.

Every call opens its own connection, so threads and processes can share the
index; SQLite serialises the writers. Read-only calls never create a store. An
index that is missing or damaged is rebuilt from the job folders (``recovery``)
the first time a process opens it. Rows change state only through
``state.transition`` (built on :func:`update_if`); the job folders themselves
are ``store``'s.
"""
from __future__ import annotations

import json
import os
import random
import sqlite3
import threading
import time
from contextlib import closing
from pathlib import Path

from qhybrid.errors import JobNotFoundError, SpecError, StoreError
from qhybrid.jobs import contract, instances, recovery
from qhybrid.jobs import states as job_state
from qhybrid.jobs.states import JobState

COLUMNS = (
    "name", "state", "device", "instance_type", "instance_count", "created", "started", "ended",
    "supervisor_pid", "supervisor_start", "reason", "traceback", "billed_seconds", "cost",
    "cancel_requested", "processes", "heartbeat",
)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    name TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    device TEXT, instance_type TEXT, instance_count INTEGER,
    created REAL, started REAL, ended REAL,
    supervisor_pid INTEGER, supervisor_start TEXT,
    reason TEXT, traceback TEXT,
    billed_seconds REAL, cost REAL,
    cancel_requested INTEGER DEFAULT 0,
    processes TEXT,
    heartbeat REAL
);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state);
"""
TMP_PREFIX = recovery.TMP_PREFIX
_READY: set[str] = set()
_INIT_LOCK = threading.Lock()


def home() -> Path:
    """Return QHYBRID_HOME, checked: absolute, and a folder when it exists.

    Raises:
        StoreError: for a relative path or one naming a file.
    """
    raw = os.environ.get("QHYBRID_HOME")
    if raw and not os.path.isabs(os.path.expanduser(raw)):
        raise StoreError(f"QHYBRID_HOME={raw!r} is a relative path; set it to an absolute folder "
                         f"(e.g. {os.path.abspath(raw)!r})")
    root = instances.home().expanduser()
    if root.exists() and not root.is_dir():
        raise StoreError(f"QHYBRID_HOME {str(root)!r} is a file, not a folder; point QHYBRID_HOME at a folder")
    return root


def ensure_home() -> Path:
    """Return QHYBRID_HOME and ``jobs/`` below it, created 0700 when missing.

    Raises:
        StoreError: when it cannot be created or written (permissions, read-only filesystem).
    """
    root = home()
    try:
        root.mkdir(mode=contract.DIR_MODE, parents=True, exist_ok=True)
        (root / "jobs").mkdir(mode=contract.DIR_MODE, exist_ok=True)
    except OSError as err:
        raise StoreError(f"QHYBRID_HOME {str(root)!r} cannot be created: {err.strerror or err}; "
                         "set QHYBRID_HOME to a writable folder") from None
    if not os.access(root, os.W_OK | os.X_OK) or not os.access(root / "jobs", os.W_OK | os.X_OK):
        raise StoreError(f"QHYBRID_HOME {str(root)!r} is not writable (permissions or a read-only filesystem); "
                         "set QHYBRID_HOME to a writable folder")
    return root


def jobs_root() -> Path:
    return home() / "jobs"


def job_dir(name: str) -> Path:
    return jobs_root() / name


def exists() -> bool:
    """True when the store has an index or job folders (read-only callers look before they connect;
    folders without an index get one, rebuilt from them)."""
    root = home()
    if (root / "index.db").exists():
        return True
    jobs = root / "jobs"
    return jobs.is_dir() and any(p.is_dir() and contract.is_job_name(p.name) for p in jobs.iterdir())


def connect() -> sqlite3.Connection:
    """Open the index (creating the store) with WAL and a generous busy timeout. The first time a
    process opens it, under the index lock: an index that is not a database (truncated, garbage)
    is set aside, and a missing one rebuilt from the job folders before anyone reads it."""
    root = ensure_home()
    path = root / "index.db"
    if str(path) in _READY and path.exists():
        return _open(path)
    with _INIT_LOCK, recovery.index_lock(path):  # once per process and file: WAL mode and schema persist
        _READY.discard(str(path))
        recovery.set_aside(path)
        conn = _open(path, rebuild=not path.exists())
        _READY.add(str(path))
        return conn


def _open(path: Path, *, rebuild: bool | None = None) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    conn.row_factory = sqlite3.Row
    try:
        conn.execute("PRAGMA busy_timeout=30000")
        conn.execute("PRAGMA synchronous=NORMAL")
        if rebuild is not None:
            _initialise(conn, rebuild=rebuild)
    except BaseException:
        conn.close()
        raise
    return conn


def _initialise(conn: sqlite3.Connection, *, rebuild: bool = False) -> None:
    """Switch to WAL, create (or extend) the schema and check the file; retried because a
    journal-mode switch may be refused at once (SQLITE_BUSY) while another process does the same."""
    for attempt in range(100):
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)
            have = {r[1] for r in conn.execute("PRAGMA table_info(jobs)")}
            if "heartbeat" not in have:
                conn.execute("ALTER TABLE jobs ADD COLUMN heartbeat REAL")
            if conn.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                raise sqlite3.DatabaseError("database disk image is malformed")
            fresh = conn.execute("SELECT count(*) FROM jobs").fetchone()[0] == 0
            break
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) and "busy" not in str(err).lower() or attempt == 99:
                raise
            time.sleep(0.02 + 0.01 * random.random())
    for db in home().glob("index.db*"):
        os.chmod(db, contract.FILE_MODE)
    if fresh and rebuild:
        recovery.adopt_folders(conn, jobs_root())


def insert(spec) -> None:
    """Reserve a job's name with a QUEUED row.

    Raises:
        SpecError: when the name is taken.
    """
    with closing(connect()) as conn:
        try:
            conn.execute(
                "INSERT INTO jobs (name, state, device, instance_type, instance_count, created) VALUES (?,?,?,?,?,?)",
                (spec.name, JobState.QUEUED.value, spec.device, spec.instance_type, spec.instance_count, spec.created),
            )
        except sqlite3.IntegrityError:
            raise SpecError(f"job name {spec.name!r} is already taken; choose another or omit it") from None


def _has_row(name: str) -> bool:
    with closing(connect()) as conn:
        return conn.execute("SELECT 1 FROM jobs WHERE name=?", (name,)).fetchone() is not None


def get(name: str) -> dict:
    """Return a job's index row as a dict (``state`` a JobState).

    Raises:
        JobNotFoundError: naming the job and a few that exist.
    """
    row, names = None, []
    if exists():
        with closing(connect()) as conn:
            row = conn.execute("SELECT * FROM jobs WHERE name=?", (name,)).fetchone()
            if row is None:
                names = [r[0] for r in conn.execute("SELECT name FROM jobs ORDER BY created DESC LIMIT 5")]
    if row is None:
        hint = f"; recent jobs: {', '.join(names)}" if names else "; no jobs yet"
        raise JobNotFoundError(f"no job named {name!r} in {home()}{hint}")
    return _typed(row)


def _typed(row) -> dict:
    out = dict(row)
    out["state"] = JobState(out["state"])
    return out


def rows(state: str | None = None) -> list[dict]:
    """Return every job's row, oldest first (optionally only one state); ``[]`` when no store exists."""
    if state is not None:
        state = job_state.parse(state)
    if not exists():
        return []
    with closing(connect()) as conn:
        if state:
            cur = conn.execute("SELECT * FROM jobs WHERE state=? ORDER BY created", (state.value,))
        else:
            cur = conn.execute("SELECT * FROM jobs ORDER BY created")
        return [_typed(r) for r in cur]


def update_if(name: str, from_states, **fields) -> bool:
    """Set columns of a job's row only while its state is one of ``from_states``; True if it did.
    (The primitive under ``state.transition``.)"""
    cols = ", ".join(f"{k}=?" for k in fields)
    marks = ",".join("?" * len(from_states))
    with closing(connect()) as conn:
        cur = conn.execute(
            f"UPDATE jobs SET {cols} WHERE name=? AND state IN ({marks})", (*fields.values(), name, *from_states)
        )
        return cur.rowcount == 1


def delete_row(name: str) -> None:
    with closing(connect()) as conn:
        conn.execute("DELETE FROM jobs WHERE name=?", (name,))


def processes(row: dict) -> list[list]:
    """Return the recorded ``[pid, start time]`` pairs of a job's process groups."""
    try:
        return json.loads(row.get("processes") or "[]")
    except ValueError:
        return []
