"""The store's locks, every wait bounded: a paused or stuck process holds up no command for long.

Two locks guard the store: SQLite's own (the index ``index.db``; its writers hold it for
milliseconds) and the index lock ``.index.lock`` (held while a damaged or missing index is set
aside and rebuilt). A command waits for either at most ``lock_timeout()`` seconds
(``QHYBRID_LOCK_TIMEOUT``, default 10), then ends in one line naming the lock (``StoreError``).
Standard library only; imported by ``store`` and ``recovery`` alike.
"""
from __future__ import annotations

import os
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path

from qhybrid.errors import StoreError
from qhybrid.jobs import contract

LOCK_TIMEOUT_S = 10.0


def lock_timeout() -> float:
    """Seconds a command waits for a lock of the store (``QHYBRID_LOCK_TIMEOUT``, default 10)."""
    try:
        value = float(os.environ.get("QHYBRID_LOCK_TIMEOUT", LOCK_TIMEOUT_S))
    except ValueError:
        return LOCK_TIMEOUT_S
    return value if value > 0 else LOCK_TIMEOUT_S


def locked(err: sqlite3.OperationalError, path: Path) -> Exception:
    """The one-line StoreError for SQLite's "database is locked" / "busy" (other errors unchanged)."""
    if "locked" not in str(err) and "busy" not in str(err).lower():
        return err
    return StoreError(f"the job index {path} stayed locked for {lock_timeout():g} s (another qhybrid "
                      "process holds it: a paused command? resume or end it; QHYBRID_LOCK_TIMEOUT sets the wait)")


class Connection(sqlite3.Connection):
    """A connection whose lock waits end in one line naming the index, not a traceback."""

    def execute(self, sql, parameters=(), /):
        try:
            return super().execute(sql, parameters)
        except sqlite3.OperationalError as err:
            raise locked(err, self.path) from None

    def executescript(self, script, /):
        try:
            return super().executescript(script)
        except sqlite3.OperationalError as err:
            raise locked(err, self.path) from None


def connect(path: Path) -> sqlite3.Connection:
    """Open the index at ``path`` in autocommit mode, its lock waits bounded by ``lock_timeout()``."""
    wait = lock_timeout()
    conn = sqlite3.connect(path, timeout=wait, isolation_level=None, factory=Connection)
    conn.path = path
    conn.row_factory = sqlite3.Row
    try:
        conn.execute(f"PRAGMA busy_timeout={int(wait * 1000)}")
    except BaseException:
        conn.close()
        raise
    return conn


@contextmanager
def index_lock(path: Path):
    """The store's index lock (``.index.lock`` beside ``path``): held while an index is checked,
    set aside or rebuilt, so that processes meeting a missing or damaged index at once rebuild it
    once and none of them reads it half-made. Waited for at most ``lock_timeout()`` seconds.

    Raises:
        StoreError: when another process holds it that long (naming the lock and its holder).
    """
    import fcntl

    where = path.with_name(".index.lock")
    with open(where, "a+", opener=contract.private_opener) as lock:
        deadline = time.monotonic() + lock_timeout()
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    lock.seek(0)
                    holder = lock.read().strip()
                    raise StoreError(f"the store's index lock {where} stayed held for {lock_timeout():g} s"
                                     + (f" by pid {holder}" if holder.isdigit() else "")
                                     + " (a paused qhybrid command? resume or end it)") from None
                time.sleep(0.02)
        lock.truncate(0)
        lock.write(str(os.getpid()))
        lock.flush()
        yield
