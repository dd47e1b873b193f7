"""Local backend: each rank a subprocess in its own process group on this machine.

Children die with the supervisor (Linux ``PR_SET_PDEATHSIG``), and their
process groups are recorded so that anyone can end them later.
"""
from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import threading
import time

from qhybrid.jobs import instances, procs
from qhybrid.jobs.backends.base import Backend as BaseBackend
from qhybrid.jobs.lines import read_lines

PIPE_BYTES = 1 << 20


def _child_setup() -> None:  # runs in the child between fork and exec
    os.setpgid(0, 0)
    procs.die_with_parent()


def _widen(fd: int) -> None:
    """Give the pipe 1 MiB (Linux's default limit for anyone) so that a script printing fast never
    waits while its reader works; the default 64 KiB where that is refused."""
    try:
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (AttributeError, OSError):  # not Linux, or a lower limit set for this user
        pass


class Backend(BaseBackend):
    """Subprocesses with merged stdout/stderr, each read in chunks by one thread (``lines.read_lines``)
    that hands ``on_line`` blocks of whole lines joined by newlines."""

    local = True

    @property
    def max_processes(self) -> int:
        """Every rank runs on this machine: at most 4 per core (at least 16)."""
        return max(16, 4 * instances.local_cores())

    def __init__(self):
        self._procs: dict[int, subprocess.Popen] = {}
        self._readers: list[threading.Thread] = []

    def launch(self, processes, on_line) -> None:
        for spec in processes:
            proc = subprocess.Popen(
                spec.argv,
                env=spec.env,
                cwd=spec.cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                preexec_fn=_child_setup,
                close_fds=True,
            )
            self._procs[spec.rank] = proc
            _widen(proc.stdout.fileno())
            reader = threading.Thread(target=self._read, args=(spec.rank, proc, on_line), daemon=True)
            reader.start()
            self._readers.append(reader)

    @staticmethod
    def _read(rank, proc, on_line) -> None:
        read_lines(proc.stdout.fileno(), lambda text: on_line(rank, text))
        proc.stdout.close()

    def poll(self) -> dict[int, int | None]:
        return {rank: proc.poll() for rank, proc in self._procs.items()}

    def groups(self) -> list[list]:
        return [[p.pid, procs.start_time(p.pid)] for p in self._procs.values()]

    def kill(self, grace: float = 3.0) -> None:
        live = [p for p in self._procs.values() if p.poll() is None]
        for p in live:
            procs.signal_group(p.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and any(p.poll() is None for p in live):
            time.sleep(0.05)
        for p in self._procs.values():  # the group may hold grandchildren even if the leader left
            procs.signal_group(p.pid, signal.SIGKILL)
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:  # pragma: no cover
                pass

    def drain(self, timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        for reader in self._readers:
            reader.join(max(0.0, deadline - time.monotonic()))
