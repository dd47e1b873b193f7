"""Local backend: each rank a subprocess in its own process group on this machine.

Children die with the supervisor (Linux ``PR_SET_PDEATHSIG``), and their
process groups are recorded so that anyone can end them later.
"""
from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

from qhybrid.jobs import instances, procs
from qhybrid.jobs.backends.base import Backend as BaseBackend


def _child_setup() -> None:  # runs in the child between fork and exec
    os.setpgid(0, 0)
    procs.die_with_parent()


class Backend(BaseBackend):
    """Subprocesses with merged stdout/stderr read line by line by one thread each."""

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
            reader = threading.Thread(target=self._read, args=(spec.rank, proc, on_line), daemon=True)
            reader.start()
            self._readers.append(reader)

    @staticmethod
    def _read(rank, proc, on_line) -> None:
        for raw in iter(proc.stdout.readline, b""):
            on_line(rank, raw.decode("utf-8", errors="replace").rstrip("\r\n"))
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
