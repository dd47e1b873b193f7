"""Where compiled kernels are cached (standard library only, so the CLI can say so without loading the engine).

The cache lives in one folder per *key*, ``kernels-<qhybrid version>-<source digest>``, under a base:
``NUMBA_CACHE_DIR`` when the user sets it, else ``$XDG_CACHE_HOME/qhybrid`` (``~/.cache/qhybrid``);
once per install and machine, never in the package or a source tree. ``sim.jit`` points numba at
:func:`cache_dir` (and sets ``NUMBA_CACHE_DIR`` to it for child processes, whose :func:`base_dir`
recognises the key folder and keys beside it, not inside it).

Why a key: numba drops a cached kernel when the decorated function's own file changes, not
when a callee it inlined from another file does (``qaoa/numba_kernels.py`` inlines
``sim/walsh.py``'s butterflies), and would then run the stale kernel. The digest covers every
kernel module (:func:`kernel_sources`), so any change to one starts a fresh folder. A user's
``NUMBA_CACHE_DIR`` is keyed inside too (numba has one cache folder per process, so the user's
own ``cache=True`` functions go to the key folder as well): kept, and made safe.

Superseded key folders are pruned by :func:`open_cache` (the engine's start, not the CLI's
look): each process holds a shared lock on its key folder's ``.in-use`` file for its lifetime;
a sibling beyond the :data:`KEEP` most recently used is deleted only when an exclusive lock on
it can be taken (no live process uses it), and never the current one.

One kernel compiled by several processes at once (two cold jobs, or a child started to compile ahead
of its parent) is compiled once: :func:`compiling` holds ``.compiling-<name>`` in the key folder
while a process compiles ``name``; the others wait, then load it from the cache.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import shutil
import time
import uuid
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no locks, so nothing is pruned
    fcntl = None

#: The sub-packages whose sources numba compiles (a kernel inlines helpers across them).
KERNEL_PACKAGES = ("sim", "qaoa", "qml")
#: Superseded key folders kept besides the current one (two checkouts sharing a cache
#: do not recompile each other's kernels at every switch).
KEEP = 3
IN_USE = ".in-use"
COMPILING = ".compiling-"  # + a kernel's name: the lock of :func:`compiling`
KEY = re.compile(r"kernels-[0-9A-Za-z.+_-]+-[0-9a-f]{16}")
_PACKAGE = Path(__file__).resolve().parent
_held: dict[Path, int] = {}  # key folder -> the open file holding its shared lock
_compiling: dict[str, int] = {}  # name -> the inherited descriptor of its lock this process holds (adopt)


@functools.cache
def key() -> str:
    """``kernels-<version>-<digest>``: the digest of the kernel modules' sources (path and bytes,
    :func:`kernel_sources`), read once per process (about a millisecond)."""
    from qhybrid import __version__

    digest = hashlib.sha256()  # (SHA extensions: the fastest hashlib offers here)
    for rel, data in kernel_sources():
        digest.update(f"{rel}\0".encode())
        digest.update(data)
    return f"kernels-{__version__}-{digest.hexdigest()[:16]}"


def kernel_sources() -> list[tuple[str, bytes]]:
    """``(path relative to the package, bytes)`` of every kernel module: a ``.py`` file of
    :data:`KERNEL_PACKAGES` whose source mentions ``njit``, ``prange`` or ``intrinsic`` (numba
    code, or what it is compiled with). A module without either cannot be inlined into a kernel, so editing
    it recompiles nothing; a constant a kernel bakes in must live in a kernel module
    (tests/test_kernel_cache.py checks every import of one)."""
    found: list[tuple[str, bytes]] = []
    for package in KERNEL_PACKAGES:
        _scan(found, os.path.join(_PACKAGE, package), package)
    return found


def _scan(found: list, folder: str, rel: str) -> None:
    with os.scandir(folder) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.is_dir() and entry.name != "__pycache__":
                _scan(found, entry.path, f"{rel}/{entry.name}")
            elif entry.name.endswith(".py"):
                with open(entry.path, "rb") as f:
                    data = f.read()
                if b"njit" in data or b"prange" in data or b"intrinsic" in data:
                    found.append((f"{rel}/{entry.name}", data))


def base_dir() -> Path:
    """The folder holding the key folders: ``NUMBA_CACHE_DIR`` (the folder above when it
    names a key folder, i.e. was set by a parent process's ``sim.jit``), else
    ``$XDG_CACHE_HOME/qhybrid``."""
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given:
        path = Path(given)
        return path.parent if KEY.fullmatch(path.name) else path
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "qhybrid"


def cache_dir() -> Path:
    """Where this install's compiled kernels are cached: ``base_dir() / key()``."""
    return base_dir() / key()


def open_cache() -> Path:
    """:func:`cache_dir`, created, held in use by this process (a shared lock until it exits,
    inherited by forked children) and stamped as used now; then superseded siblings pruned.
    A folder that cannot be written is returned as it is (numba then compiles without caching)."""
    folder = cache_dir()
    if fcntl is None or folder in _held:
        return folder
    try:
        _hold(folder)
    except OSError:
        return folder
    prune(folder.parent, keep=folder)
    return folder


def _hold(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for _ in range(3):
        fd = os.open(folder / IN_USE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        fcntl.flock(fd, fcntl.LOCK_SH)  # waits while a pruner deletes the folder
        try:
            same = os.stat(folder / IN_USE).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            os.utime(fd)
            _held[folder] = fd
            return
        os.close(fd)  # pruned meanwhile: start the folder afresh
        folder.mkdir(parents=True, exist_ok=True)


def prune(base: Path, *, keep: Path) -> list[str]:
    """Delete the key folders in ``base`` beyond ``keep`` and the :data:`KEEP` most recently
    used others that no process holds; returns their names. Nothing that is not a key
    folder is touched."""
    try:
        siblings = [p for p in base.iterdir() if KEY.fullmatch(p.name) and p != keep and p.is_dir()]
    except OSError:
        return []
    if fcntl is None or len(siblings) <= KEEP:
        return []
    siblings.sort(key=_last_used, reverse=True)
    removed = []
    for folder in siblings[KEEP:]:
        try:
            fd = os.open(folder / IN_USE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue  # in use
        try:  # out of the way first (one rename), so that no process starts in a half-deleted folder
            doomed = base / f".deleting-{uuid.uuid4().hex}"
            folder.rename(doomed)
        except OSError:
            os.close(fd)
            continue
        shutil.rmtree(doomed, ignore_errors=True)
        os.close(fd)
        removed.append(folder.name)
    return removed


def _last_used(folder: Path) -> float:
    try:
        return (folder / IN_USE).stat().st_mtime
    except OSError:
        try:
            return folder.stat().st_mtime
        except OSError:
            return 0.0


@contextlib.contextmanager
def compiling(name: str, *, wait: float = 600.0):
    """The block run while no other process compiles ``name`` (a file name's worth of letters):
    an exclusive lock on ``cache_dir() / ".compiling-<name>"``, waited for while another process
    holds it (that process's compile then lands in the cache, for the block to load). A lock still
    held after ``wait`` seconds, or one that cannot be taken (no ``fcntl``, a folder that cannot be
    written), is passed over: the block runs anyway."""
    if name in _compiling:  # held since this process started (adopt)
        yield
        return
    fd = _lock_file(name)
    try:
        if fd is not None:
            deadline = time.monotonic() + wait
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.02)
        yield
    finally:
        if fd is not None:
            os.close(fd)  # (closing releases the lock)


def hold_compiling(name: str) -> int | None:
    """:func:`compiling`'s lock on ``name`` taken now, for a process about to be started to hold:
    pass it the returned file descriptor (``subprocess.Popen(pass_fds=...)``) and close this copy;
    the lock is then released when that process exits. None when another process holds it or it
    cannot be taken."""
    fd = _lock_file(name)
    if fd is None:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def adopt(name: str, fd: int) -> None:
    """This process holds ``name``'s lock already, as the file descriptor ``fd`` it was started
    with (:func:`hold_compiling` in its parent): :func:`compiling` runs its block at once."""
    _compiling[name] = fd


def release(name: str) -> None:
    """Let go of ``name``'s lock this process :func:`adopt`-ed (others waiting on it go on); a
    later :func:`compiling` of ``name`` takes the lock as any process would."""
    fd = _compiling.pop(name, None)
    if fd is not None:
        os.close(fd)


def _lock_file(name: str) -> int | None:
    if fcntl is None:
        return None
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return os.open(folder / f"{COMPILING}{name}", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError:
        return None
