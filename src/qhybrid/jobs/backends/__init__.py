"""Backends place a job's processes; the supervisor owns everything else.

A backend is found by file name (``backends/<name>.py`` exporting ``Backend``)
and implements this small interface:

- ``launch(processes, on_line)``: start every ProcessSpec; call
  ``on_line(rank, line)`` for each line the process writes (stdout and stderr);
- ``poll() -> dict[rank, int | None]``: exit codes, None while running;
- ``kill(grace)``: end every process tree (SIGTERM, then SIGKILL after ``grace`` s);
- ``groups() -> list[[pid, start]]``: what to record so a dead supervisor's
  processes can still be found and ended;
- ``drain(timeout)``: wait until all output has been delivered;
- optional ``finish()``: called once after the processes ended and before the
  final state is recorded (a remote backend copies ``results/`` and
  ``checkpoints/`` back into the job folder here; an exception fails the job);
- optional ``prepare(processes, on_line, cancelled)``: called while the job is
  still QUEUED; may block until the backend has room (Ray: the placement group),
  returning early when ``cancelled()`` is true; never raises;
- optional ``failure_reason(rank) -> str | None``: the reason to record for a
  failed rank when the backend knows it better than the exit code (Ray:
  ``worker died: ...``).

The job folder's paths are in each ProcessSpec's ``env`` (``AMZN_BRAKET_*``)
and ``cwd`` (the source snapshot); a remote backend maps them to its own.

``local`` runs subprocesses on this machine, ``inprocess`` runs the script in
this interpreter (tests, debugging); ``ray`` places them on a Ray cluster (docs/ray.md).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from qhybrid.errors import SpecError


@dataclass(frozen=True)
class ProcessSpec:
    """One process of a job: its rank, command line, full environment and working folder."""

    rank: int
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = "."


def get_backend(name: str):
    """Return a new backend instance by name.

    Raises:
        SpecError: for a backend that is not available here.
    """
    try:
        module = importlib.import_module(f"qhybrid.jobs.backends.{name}")
    except ModuleNotFoundError as err:
        if err.name and err.name.startswith("qhybrid.jobs.backends"):
            raise SpecError(f"backend {name!r} is not available; use 'local'") from None
        raise SpecError(f"backend {name!r} needs {err.name!r}, which is not installed") from None
    return module.Backend()
