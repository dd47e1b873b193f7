"""A job's watchdog: ends the job's processes the moment its supervisor dies, even by SIGKILL.

The ranks of a local job die with the supervisor (``PR_SET_PDEATHSIG``), but what they started
does not: a grandchild in the rank's process group, or one that left it (``setsid``), is
re-parented and runs on until some later command finds the supervisor dead. The watchdog is a
small process (plain Python, nothing imported from qhybrid) in a session of its own, holding the
read end of a pipe whose write end only the supervisor holds. The supervisor tells it the job's
process groups as they start; at the end it writes ``done`` and the watchdog leaves quietly. When
the pipe reaches its end without ``done``, the supervisor is gone: the watchdog kills every group
it was told and every process listed in the job's ``descendants.json`` (a pid with its start time,
so a reused pid is never hit).

Example:
    >>> dog = Watchdog(folder / contract.DESCENDANTS_FILE)   # doctest: +SKIP
    >>> dog.watch(backend.groups()); ...; dog.close()         # doctest: +SKIP
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_CODE = r"""
import json, os, signal, sys
fd, path = int(sys.argv[1]), sys.argv[2]
for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
    signal.signal(sig, signal.SIG_IGN)
data = b""
while True:
    chunk = os.read(fd, 65536)
    if not chunk:
        break
    data += chunk
lines = data.decode("ascii", "replace").split()
if "done" in lines:
    sys.exit(0)
def start(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return None if fields[0] in ("Z", "X") else fields[19]
    except (OSError, IndexError):
        return None
for item in lines:
    pgid, _, started = item.partition(":")
    if pgid.isdigit() and start(int(pgid)) in (None, started):
        try:
            os.killpg(int(pgid), signal.SIGKILL)
        except OSError:
            pass
try:
    recorded = json.load(open(path))
except (OSError, ValueError):
    recorded = []
for pid, started in recorded:
    if pid != os.getpid() and started and start(int(pid)) == started:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass
"""


class Watchdog:
    """The watchdog process of one job (see the module docstring).

    Args:
        recorded: the job's ``descendants.json`` (read only if the supervisor dies).
    """

    def __init__(self, recorded: Path):
        read, self._write = os.pipe()  # both ends non-inheritable: the job's processes never hold them
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-S", "-c", _CODE, str(read), str(recorded)], pass_fds=(read,),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, close_fds=True,
            )
        finally:
            os.close(read)

    @property
    def pid(self) -> int:
        """The watchdog's pid (spared when the supervisor ends its own descendants)."""
        return self._proc.pid

    def watch(self, groups: list[list]) -> None:
        """Tell the watchdog about process groups (``[[pgid, start time]]``) to kill if we die."""
        text = "".join(f"{int(pgid)}:{started or ''}\n" for pgid, started in groups if pgid)
        if text and self._write is not None:
            os.write(self._write, text.encode("ascii"))

    def close(self) -> None:
        """The job ended under its supervisor: the watchdog leaves without killing anything."""
        if self._write is None:
            return
        try:
            os.write(self._write, b"done\n")
        finally:
            os.close(self._write)
            self._write = None
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - it only reads a pipe
            self._proc.kill()
