"""The job store: a SQLite (WAL) index plus one folder per job under QHYBRID_HOME.

Layout of ``$QHYBRID_HOME/jobs/<name>/``: ``spec.json``, ``source/``,
``input/<channel>/``, ``hyperparameters.json``, ``results/``,
``checkpoints/``, ``logs/``, ``metrics.jsonl``. The index row holds the state,
its timestamps, the supervisor's pid and start time, the failure reason and
the bill. Every call opens its own connection, so threads and processes can
share the store; SQLite serialises the writers.
"""
from __future__ import annotations

import json
import random
import shutil
import sqlite3
import threading
import time
import uuid
from contextlib import closing
from pathlib import Path

from qhybrid.errors import JobNotFoundError, SpecError
from qhybrid.jobs import instances

STATES = ("QUEUED", "RUNNING", "COMPLETED", "FAILED", "CANCELLED")
ACTIVE = ("QUEUED", "RUNNING")
TERMINAL = ("COMPLETED", "FAILED", "CANCELLED")
COLUMNS = (
    "name", "state", "device", "instance_type", "instance_count", "created", "started", "ended",
    "supervisor_pid", "supervisor_start", "reason", "traceback", "billed_seconds", "cost",
    "cancel_requested", "processes",
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
    processes TEXT
);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state);
"""


_READY: set[str] = set()
_INIT_LOCK = threading.Lock()


def home() -> Path:
    return instances.home()


def jobs_root() -> Path:
    return home() / "jobs"


def job_dir(name: str) -> Path:
    return jobs_root() / name


def connect() -> sqlite3.Connection:
    """Open the index (creating it) with WAL and a generous busy timeout."""
    root = home()
    root.mkdir(parents=True, exist_ok=True)
    path = root / "index.db"
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout=30000")
    conn.execute("PRAGMA synchronous=NORMAL")
    if str(path) not in _READY or not path.exists():
        with _INIT_LOCK:  # once per process and file: WAL mode and the schema persist in the file
            _initialise(conn)
            _READY.add(str(path))
    return conn


def _initialise(conn: sqlite3.Connection) -> None:
    """Switch to WAL and create the schema; retried because a journal-mode switch may be refused
    at once (SQLITE_BUSY) while another process initialises the same file."""
    for attempt in range(100):
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) and "busy" not in str(err).lower() or attempt == 99:
                raise
            time.sleep(0.02 + 0.01 * random.random())


def insert(spec) -> None:
    """Reserve a job's name with a QUEUED row.

    Raises:
        SpecError: when the name is taken.
    """
    if job_dir(spec.name).exists():
        raise SpecError(f"job name {spec.name!r} is already taken; choose another or omit it")
    with closing(connect()) as conn:
        try:
            conn.execute(
                "INSERT INTO jobs (name, state, device, instance_type, instance_count, created) VALUES (?,?,?,?,?,?)",
                (spec.name, "QUEUED", spec.device, spec.instance_type, spec.instance_count, spec.created),
            )
        except sqlite3.IntegrityError:
            raise SpecError(f"job name {spec.name!r} is already taken; choose another or omit it") from None


def create(spec, populate) -> Path:
    """Insert the row, build the job folder in a temp place with ``populate(folder)``, move it in.

    On any failure the row and the folder are removed: a rejected job leaves nothing.
    """
    insert(spec)
    root = jobs_root()
    tmp = root / f".tmp-{spec.name}-{uuid.uuid4().hex[:8]}"
    try:
        root.mkdir(parents=True, exist_ok=True)
        tmp.mkdir()
        for sub in ("source", "input", "results", "checkpoints", "logs"):
            (tmp / sub).mkdir()
        populate(tmp)
        (tmp / "spec.json").write_text(spec.to_json(), encoding="utf-8")
        (tmp / "metrics.jsonl").touch()
        tmp.rename(job_dir(spec.name))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        delete_row(spec.name)
        raise
    return job_dir(spec.name)


def get(name: str) -> dict:
    """Return a job's index row as a dict.

    Raises:
        JobNotFoundError: naming the job and a few that exist.
    """
    with closing(connect()) as conn:
        row = conn.execute("SELECT * FROM jobs WHERE name=?", (name,)).fetchone()
        if row is None:
            names = [r[0] for r in conn.execute("SELECT name FROM jobs ORDER BY created DESC LIMIT 5")]
    if row is None:
        hint = f"; recent jobs: {', '.join(names)}" if names else "; no jobs yet"
        raise JobNotFoundError(f"no job named {name!r} in {home()}{hint}")
    return dict(row)


def rows(state: str | None = None) -> list[dict]:
    """Return every job's row, oldest first (optionally only one state)."""
    if state is not None and state not in STATES:
        raise SpecError(f"state {state!r} is not one of {', '.join(STATES)}")
    with closing(connect()) as conn:
        if state:
            cur = conn.execute("SELECT * FROM jobs WHERE state=? ORDER BY created", (state,))
        else:
            cur = conn.execute("SELECT * FROM jobs ORDER BY created")
        return [dict(r) for r in cur]


def update(name: str, **fields) -> None:
    """Set some columns of a job's row."""
    if not fields:
        return
    cols = ", ".join(f"{k}=?" for k in fields)
    with closing(connect()) as conn:
        conn.execute(f"UPDATE jobs SET {cols} WHERE name=?", (*fields.values(), name))


def transition(name: str, to_state: str, *, from_states=ACTIVE, **fields) -> bool:
    """Move a job to ``to_state`` only if it is in one of ``from_states``; True if it moved."""
    fields = {"state": to_state, **fields}
    if to_state in TERMINAL and "ended" not in fields:
        fields["ended"] = time.time()
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


def delete(name: str) -> None:
    """Remove a job's row and folder."""
    get(name)
    shutil.rmtree(job_dir(name), ignore_errors=True)
    delete_row(name)


def processes(row: dict) -> list[list]:
    """Return the recorded ``[pid, start time]`` pairs of a job's process groups."""
    return json.loads(row.get("processes") or "[]")
