"""Process identity and process-group signalling (Linux /proc, with a POSIX fallback).

A pid alone can be reused; a (pid, start time) pair names one process.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time


def start_time(pid: int) -> str | None:
    """Return the start time of ``pid`` (clock ticks since boot, as text) or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        if fields[0] in ("Z", "X"):  # zombie or dead: finished
            return None
        return fields[19]
    except FileNotFoundError:
        return None
    except (OSError, IndexError):  # no /proc: fall back to existence
        try:
            os.kill(pid, 0)
            return "?"
        except OSError:
            return None


def alive(pid: int | None, started: str | None) -> bool:
    """Return True if the process ``pid`` that started at ``started`` still runs."""
    if not pid:
        return False
    now = start_time(int(pid))
    if now is None:
        return False
    return started in (None, "", "?") or now == "?" or now == started


def signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to a process group; False if it no longer exists."""
    try:
        os.killpg(pgid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def kill_groups(groups: list[list], grace: float = 3.0) -> None:
    """SIGTERM each live ``[pgid, start]`` group, wait up to ``grace`` seconds, then SIGKILL the rest."""
    own = {os.getpid(), os.getpgid(0)}  # never our own process or group (in-process jobs record us)
    live = [int(pid) for pid, started in groups if pid and int(pid) not in own and alive(pid, started)]
    for pgid in live:
        signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while live and time.monotonic() < deadline:
        live = [p for p in live if _group_exists(p)]
        time.sleep(0.05)
    for pgid in live:
        signal_group(pgid, signal.SIGKILL)


def _group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    # a group whose members are all zombies still "exists"; look at the leader
    return start_time(pgid) is not None or _any_member_running(pgid)


def _any_member_running(pgid: int) -> bool:
    try:
        return any(int(fields[2]) == pgid for _pid, fields in _live_stats())
    except OSError:  # /proc unreadable: assume the group still runs
        return True


def _live_stats(*, zombies: bool = False):
    """Yield ``(pid, stat fields after the command name)`` for every live process (and, with
    ``zombies``, every finished one not yet waited for).

    Raises:
        OSError: when /proc cannot be listed.
    """
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):  # the process ended meanwhile
            continue
        if fields and fields[0] != "X" and (zombies or fields[0] != "Z"):
            yield int(entry), fields


# -- Linux process controls (prctl) -------------------------------------------------------------------
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER, PR_GET_CHILD_SUBREAPER = 1, 36, 37


def _load_prctl():
    try:
        return ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None
    except (OSError, AttributeError):  # pragma: no cover - a libc without prctl
        return None


_PRCTL = _load_prctl()  # resolved at import: nothing is loaded between fork and exec (``preexec_fn``)


def prctl(option: int, arg=0) -> bool:
    """Linux ``prctl(option, arg, 0, 0, 0)`` (``arg`` an int or a ``ctypes.byref``): True when it
    succeeded, False when it failed or the platform has none. Safe in a ``preexec_fn``."""
    return _PRCTL is not None and _PRCTL(option, arg, 0, 0, 0) == 0


def die_with_parent(sig: int = signal.SIGKILL) -> bool:
    """Ask Linux to send ``sig`` to this process when its parent (thread) dies
    (``PR_SET_PDEATHSIG``); for a child between fork and exec. False elsewhere."""
    return prctl(PR_SET_PDEATHSIG, int(sig))


# -- descendants: no process outlives its job ----------------------------------------------------------
def become_subreaper() -> bool:
    """Make this process the child subreaper of its descendants (Linux ``PR_SET_CHILD_SUBREAPER``):
    orphans among them (a script's children that ``setsid()`` and outlive their parent) are
    re-parented here instead of to init, so they can still be found and ended. False elsewhere."""
    return prctl(PR_SET_CHILD_SUBREAPER, 1)


@contextlib.contextmanager
def subreaper():
    """This process as child subreaper for the block (see ``become_subreaper``), as it was after.

    For a job run inside the caller (the in-process backend): orphans of the job's processes come
    here while it runs, so ``end_descendants`` finds them; the caller's own setting is restored.
    """
    before = ctypes.c_int(0)
    change = prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(before)) and not before.value
    if change:
        become_subreaper()
    try:
        yield
    finally:
        if change:
            prctl(PR_SET_CHILD_SUBREAPER, 0)


def children() -> set[int]:
    """Pids of this process's children, finished ones (zombies not yet waited for) included."""
    own = os.getpid()
    try:
        return {pid for pid, fields in _live_stats(zombies=True) if int(fields[1]) == own}
    except OSError:
        return set()


def _table() -> dict[int, tuple[int, str]]:
    """``{pid: (ppid, start)}`` of every live (non-zombie) process, from /proc."""
    try:
        return {pid: (int(fields[1]), fields[19]) for pid, fields in _live_stats()}
    except OSError:
        return {}


def descendants(root: int | None = None, *, spare=()) -> list[list]:
    """Return ``[[pid, start]]`` of every live descendant of ``root`` (default: this process),
    leaving out the pids in ``spare`` and everything under them."""
    root = os.getpid() if root is None else root
    spare = set(spare)
    table = _table()
    below: dict[int, list[int]] = {}
    for pid, (ppid, _start) in table.items():
        below.setdefault(ppid, []).append(pid)
    out, todo = [], [p for p in below.get(root, []) if p not in spare]
    while todo:
        pid = todo.pop()
        out.append([pid, table[pid][1]])
        todo.extend(p for p in below.get(pid, []) if p not in spare)
    return out


def kill_pids(pids: list[list], grace: float = 1.0) -> None:
    """SIGTERM each live ``[pid, start]``, wait up to ``grace`` s, SIGKILL what is left (never ourselves)."""
    own = os.getpid()
    live = [(int(p), s) for p, s in pids if p and int(p) != own and alive(p, s)]
    for pid, _s in live:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while live and time.monotonic() < deadline:
        live = [(p, s) for p, s in live if alive(p, s)]
        if live:
            time.sleep(0.02)
    for pid, _s in live:
        _signal(pid, signal.SIGKILL)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def end_descendants(grace: float = 1.0, *, keep=(), spare=(), rounds: int = 20) -> int:
    """End every descendant of this process (repeatedly, so that forks in between are caught too)
    and reap the orphans among them; ``keep``: pids another owner reaps (e.g. Popen children);
    ``spare``: pids that are not the job's (the caller's own children, for an in-process job),
    left running and unreaped with everything under them. Returns how many were found."""
    keep = set(keep) | set(spare)
    found = set()  # (pid, start): one killed in a round may still be listed in the next (not yet reaped)
    for _ in range(rounds):
        victims = descendants(spare=spare)
        if not victims:
            break
        found.update(map(tuple, victims))
        kill_pids(victims, grace=grace)
        grace = 0.2
        reap_orphans(keep)
    reap_orphans(keep)
    return len(found)


def reap_orphans(keep=()) -> None:
    """Reap zombie children of this process that no Popen owns (orphans re-parented to a subreaper)."""
    keep = set(keep)
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    own = os.getpid()
    for entry in entries:
        if not entry.isdigit() or int(entry) in keep:
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == own and fields[0] in ("Z", "X"):
                os.waitpid(int(entry), os.WNOHANG)
        except (OSError, IndexError, ValueError, ChildProcessError):
            continue
