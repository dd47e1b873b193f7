"""Process identity and process-group signalling (Linux /proc, with a POSIX fallback).

A pid alone can be reused; a (pid, start time) pair names one process.
"""
from __future__ import annotations

import os
import signal
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
        entries = os.listdir("/proc")
    except OSError:
        return True
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
                return True
        except (OSError, IndexError, ValueError):
            continue
    return False
