"""The backend protocol: what the supervisor asks of whoever places a job's processes.

A backend only places processes; the supervisor owns states, logs, metrics,
limits, cancellation and the ending of every descendant. Subclass ``Backend``
and implement ``launch``, ``poll`` and ``kill``; every other method has a
default that does nothing, so the supervisor calls them all without probing.

Example:
    >>> class Nothing(Backend):
    ...     def launch(self, processes, on_line): self._codes = {p.rank: 0 for p in processes}
    ...     def poll(self): return dict(self._codes)
    ...     def kill(self, grace=3.0): pass
"""
from __future__ import annotations

from dataclasses import dataclass, field

from qhybrid.errors import SpecError


@dataclass(frozen=True)
class ProcessSpec:
    """One process of a job: its rank, command line, full environment and working folder."""

    rank: int
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = "."


class Backend:
    """Base class of every backend (``backends/<name>.py`` or ``backends/<name>/`` exports ``Backend``).

    Class attributes:
        local: True when the processes run on this machine as children of the supervisor
            (the supervisor then records and ends their descendants itself).
        max_processes: the most processes one job may ask for (None: the backend checks in ``check``).
    """

    local = False
    max_processes: int | None = None

    # -- before launch -----------------------------------------------------------------------------
    def check(self, spec) -> None:
        """Pre-flight at submission, before anything is written: raise a QhybridError (one line)
        for a job this backend can never run (no CUDA, too many processes, unreachable cluster)."""
        if self.max_processes is not None and spec.world_size > self.max_processes:
            raise SpecError(
                f"instance_count x processes_per_instance = {spec.instance_count} x {spec.processes_per_instance} "
                f"= {spec.world_size} processes; the {type(self).__module__.rsplit('.', 1)[-1]} backend places "
                f"at most {self.max_processes} here"
            )

    def prepare(self, processes, on_line, cancelled) -> None:
        """Called while the job is still QUEUED; may block until there is room, returning early when
        ``cancelled()`` is true. Never raises. Default: nothing to wait for."""

    # -- running ------------------------------------------------------------------------------------
    def launch(self, processes, on_line) -> None:
        """Start every ProcessSpec; call ``on_line(rank, text)`` with what each prints: one line, or
        a block of whole lines joined by ``\\n`` (no trailing newline)."""
        raise NotImplementedError

    def poll(self) -> dict[int, int | None]:
        """Exit codes by rank, None while running."""
        raise NotImplementedError

    def kill(self, grace: float = 3.0) -> None:
        """End every process tree: SIGTERM, then SIGKILL after ``grace`` seconds."""
        raise NotImplementedError

    def groups(self) -> list[list]:
        """``[[pid, start time]]`` to record so that a dead supervisor's processes can be ended."""
        return []

    def drain(self, timeout: float = 5.0) -> None:
        """Wait until all output has been delivered."""

    def failure_reason(self, rank: int) -> str | None:
        """The reason to record for a failed rank when the backend knows it better than the exit code."""
        return None

    # -- after --------------------------------------------------------------------------------------
    def finish(self) -> None:
        """Called once after the processes ended, before the final state is recorded (bring outputs
        home here; raising fails the job)."""
