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
from qhybrid.jobs import contract, instances, locks, recovery
from qhybrid.jobs import states as job_state
from qhybrid.jobs.states import JobState

COLUMNS = (
    "name", "state", "device", "instance_type", "instance_count", "created", "started", "ended",
    "supervisor_pid", "supervisor_start", "reason", "traceback", "billed_seconds", "cost",
    "cancel_requested", "processes", "heartbeat", "phase",
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
    heartbeat REAL,
    phase TEXT
);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state);
"""
TMP_PREFIX = recovery.TMP_PREFIX
_READY: set[str] = set()
_SWEPT: set[str] = set()  # homes whose half-made submissions this process has looked for
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
    sweep(root)
    if (root / "index.db").exists():
        return True
    jobs = root / "jobs"
    return jobs.is_dir() and any(p.is_dir() and contract.is_job_name(p.name) for p in jobs.iterdir())


def connect() -> sqlite3.Connection:
    """Open the index (creating the store) with WAL and a generous busy timeout. The first time a
    process opens it, under the index lock: an index that is not a database (truncated, garbage)
    is set aside, and a missing one rebuilt from the job folders before anyone reads it."""
    root = ensure_home()
    sweep(root)
    path = root / "index.db"
    if str(path) in _READY and path.exists():
        return _open(path)
    if path.exists():  # a sound, complete index needs no lock: a paused holder of it stalls no one
        conn = _complete(path)
        if conn is not None:
            _READY.add(str(path))
            return conn
    with _INIT_LOCK, recovery.index_lock(path):  # once per process and file: WAL mode and schema persist
        _READY.discard(str(path))
        recovery.set_aside(path)
        conn = _open(path, rebuild=not path.exists())
        _READY.add(str(path))
        return conn


def lock_timeout() -> float:
    """Seconds any command waits for a lock of the store (see ``qhybrid.jobs.locks``)."""
    return locks.lock_timeout()


def _open(path: Path, *, rebuild: bool | None = None) -> sqlite3.Connection:
    conn = locks.connect(path)
    try:
        conn.execute("PRAGMA synchronous=NORMAL")
        if rebuild is not None:
            _initialise(conn, rebuild=rebuild)
    except BaseException:
        conn.close()
        raise
    return conn


_COMPLETE = 2  # PRAGMA user_version of an index whose schema (with _ADDED) and rebuild are done
_ADDED = {"heartbeat": "REAL", "phase": "TEXT"}  # columns added since the first schema


def _complete(path: Path) -> sqlite3.Connection | None:
    """A connection to ``path`` when it is a sound index that was completed (schema and rebuild done,
    marked by ``user_version``), else None: the caller then checks it under the index lock."""
    try:
        conn = _open(path)
    except sqlite3.DatabaseError:
        return None
    try:
        if (conn.execute("PRAGMA user_version").fetchone()[0] == _COMPLETE
                and conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"):
            return conn
    except sqlite3.DatabaseError:
        pass
    conn.close()
    return None


def _initialise(conn: sqlite3.Connection, *, rebuild: bool = False) -> None:
    """Switch to WAL, create (or extend) the schema and check the file; retried because a
    journal-mode switch may be refused at once (SQLITE_BUSY) while another process does the same."""
    deadline = time.monotonic() + lock_timeout()
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            have = {r[1] for r in conn.execute("PRAGMA table_info(jobs)")}
            if not have:  # only a new index is written to here: reading commands take no write lock
                conn.executescript(_SCHEMA)
            for column, kind in _ADDED.items():  # an index from an older qhybrid gains them
                if have and column not in have:
                    conn.execute(f"ALTER TABLE jobs ADD COLUMN {column} {kind}")
            if conn.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                raise sqlite3.DatabaseError("database disk image is malformed")
            fresh = conn.execute("SELECT count(*) FROM jobs").fetchone()[0] == 0
            break
        except StoreError:  # a lock (a journal-mode switch may be refused at once while another
            if time.monotonic() > deadline:  # process does the same): retried, within the bound
                raise
            time.sleep(0.02 + 0.01 * random.random())
    for db in home().glob("index.db*"):
        os.chmod(db, contract.FILE_MODE)
    if fresh and rebuild:
        recovery.adopt_folders(conn, jobs_root())
    if conn.execute("PRAGMA user_version").fetchone()[0] != _COMPLETE:
        conn.execute(f"PRAGMA user_version={_COMPLETE}")


def sweep(root: Path) -> None:
    """Once per process and home, remove half-made submissions (``recovery.clean_stale``): a
    submission killed while copying its inputs leaves nothing past the next command, whichever."""
    if str(root) in _SWEPT:
        return
    _SWEPT.add(str(root))
    try:
        recovery.clean_stale(root / "jobs")
    except OSError:  # a store being set up or read-only: the next command looks again
        _SWEPT.discard(str(root))


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
