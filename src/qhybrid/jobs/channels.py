"""What a job copies in (its source and input channels), checked before anything is copied.

A tree may hold regular files and folders only: devices, FIFOs and sockets are
refused (``/dev/zero`` would copy forever), a symlink must stay inside the tree
it belongs to, and a folder reached twice (a symlink loop) is refused. The
total is checked against a cap and against the free disk of the store.

The cap is ``QHYBRID_MAX_INPUT_BYTES`` (bytes), default ``DEFAULT_MAX_INPUT_BYTES``
(10 GiB).
"""
from __future__ import annotations

import fnmatch
import os
import shutil
import stat
from pathlib import Path

from qhybrid.errors import SpecError
from qhybrid.jobs import index

DEFAULT_MAX_INPUT_BYTES = 10 * 2**30
MAX_INPUT_ENV = "QHYBRID_MAX_INPUT_BYTES"
COPY_IGNORE = ("__pycache__", ".git", ".venv", "*.pyc", ".pytest_cache", "qhybrid-local")
_DISK_MARGIN = 64 * 2**20  # keep this much free after copying


def max_input_bytes() -> int:
    """The cap on what one job copies in (``$QHYBRID_MAX_INPUT_BYTES``, default 10 GiB).

    Raises:
        SpecError: for a value that is not a positive integer.
    """
    raw = os.environ.get(MAX_INPUT_ENV)
    if raw is None or raw == "":
        return DEFAULT_MAX_INPUT_BYTES
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise SpecError(f"{MAX_INPUT_ENV}={raw!r} must be a positive whole number of bytes")
    return value


def _ignored(name: str, ignore) -> bool:
    return any(fnmatch.fnmatch(name, pattern) for pattern in ignore)


def _fmt(n: int) -> str:
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


def measure(path: Path, *, what: str, ignore=()) -> int:
    """Check a file or folder tree as described above; return its size in bytes (links followed).

    Raises:
        SpecError: naming the offending entry and what is accepted.
    """
    root = Path(os.path.abspath(path))
    cap = max_input_bytes()
    real_root = Path(os.path.realpath(root))
    seen: set[tuple[int, int]] = set()
    total = 0
    todo = [root]
    while todo:
        entry = todo.pop()
        try:
            lst = entry.lstat()
            if stat.S_ISLNK(lst.st_mode):
                target = Path(os.path.realpath(entry))
                if target != real_root and real_root not in target.parents:
                    raise SpecError(f"{what}: symlink {str(entry)!r} points outside {str(root)!r} (to {str(target)!r}); "
                                    "copy the file in or give its folder as its own channel")
            st = entry.stat()
        except FileNotFoundError:
            raise SpecError(f"{what}: {str(entry)!r} is a broken symlink or vanished") from None
        except OSError as err:
            raise SpecError(f"{what}: cannot read {str(entry)!r}: {err.strerror or err}") from None
        if stat.S_ISDIR(st.st_mode):
            key = (st.st_dev, st.st_ino)
            if key in seen:
                raise SpecError(f"{what}: {str(entry)!r} loops back to a folder already copied (a symlink loop)")
            seen.add(key)
            try:
                names = os.listdir(entry)
            except OSError as err:
                raise SpecError(f"{what}: cannot list {str(entry)!r}: {err.strerror or err}") from None
            todo.extend(entry / n for n in names if not _ignored(n, ignore))
        elif stat.S_ISREG(st.st_mode):
            total += st.st_size
            if total > cap:
                raise SpecError(f"{what}: more than {_fmt(cap)} to copy (at {str(entry)!r}); "
                                f"raise {MAX_INPUT_ENV} (bytes) if you mean it")
        else:
            kind = ("a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
                    else "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode)
                    else "not a regular file")
            raise SpecError(f"{what}: {str(entry)!r} is {kind}; only regular files and folders are copied")
    return total


def check_room(total: int) -> None:
    """Refuse a job whose copies exceed the cap or the store's free disk.

    Raises:
        SpecError: naming the sizes.
    """
    cap = max_input_bytes()
    if total > cap:
        raise SpecError(f"the job copies {_fmt(total)} in, more than {_fmt(cap)}; raise {MAX_INPUT_ENV} if you mean it")
    where = index.home()
    while not where.exists() and where != where.parent:
        where = where.parent
    free = shutil.disk_usage(where).free
    if total + _DISK_MARGIN > free:
        raise SpecError(f"the job copies {_fmt(total)} in but only {_fmt(free)} is free at {where}")
