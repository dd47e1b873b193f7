"""How a job's detached supervisor starts: a fresh interpreter (``exec``), or a fork of the caller.

Either way the supervisor is the same ``supervisor.main(NAME)`` in a session of its own (so the
job outlives its caller and a Ctrl-C at the terminal never reaches it), its working folder the
job's, stdin ``/dev/null``, stdout and stderr appended to ``logs/supervisor.log``, no other file
descriptor of the caller kept open.

``fork`` saves the start-up of a second interpreter (about a third of a second: Python itself,
then the job runtime's imports), for a caller that is a plain single-purpose process (the
``qhybrid`` command): the child is a copy of the caller, so a caller holding threads that matter,
locks, a GPU context or a Jupyter kernel's sockets must use ``exec``, the default. Only on Linux,
only for the ``local`` backend; anything else is started with ``exec``.
"""
from __future__ import annotations

import os
import subprocess
import sys

from qhybrid.errors import JobError
from qhybrid.jobs import contract, procs, store
from qhybrid.jobs.liveness import SUPERVISORS
from qhybrid.jobs.state import JobState, transition

MODES = ("exec", "fork")


class Forked:
    """A forked supervisor, reaped like a ``subprocess.Popen``: ``pid``, ``poll()``, ``wait()``."""

    def __init__(self, pid: int):
        self.pid = pid
        self.returncode: int | None = None

    def _reap(self, flags: int) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, flags)
            except ChildProcessError:  # reaped elsewhere (a SIGCHLD handler): it is gone
                self.returncode = -1
                return self.returncode
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def poll(self) -> int | None:
        """The exit code once it ended (reaping it), else None."""
        return self._reap(os.WNOHANG)

    def wait(self, timeout: float | None = None) -> int:
        """Wait for it to end; ``timeout`` (seconds) raises ``subprocess.TimeoutExpired``."""
        if timeout is None:
            return self._reap(0)
        import time

        deadline = time.monotonic() + timeout
        while self.poll() is None:
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"supervisor {self.pid}", timeout)
            time.sleep(0.01)
        return self.returncode


def _log_path(name: str):
    return store.job_dir(name) / contract.LOGS_DIR / contract.SUPERVISOR_LOG


def start(name: str, *, mode: str = "exec"):
    """Start the supervisor of the QUEUED job ``name``; return its process (``pid``, ``poll()``).

    Raises:
        OSError: it could not be started.
    """
    if mode == "fork" and sys.platform.startswith("linux"):
        return _fork(name)
    folder = store.job_dir(name)
    env = {**os.environ, "QHYBRID_HOME": str(store.home())}
    with open(_log_path(name), "ab", opener=contract.private_opener) as out:
        return subprocess.Popen(
            [sys.executable, "-m", "qhybrid.jobs.supervisor", name],
            cwd=str(folder), env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True, close_fds=True,
        )


def _fork(name: str) -> Forked:
    folder, home = store.job_dir(name), str(store.home())
    log = os.open(_log_path(name), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    null = os.open(os.devnull, os.O_RDONLY)
    for stream in (sys.stdout, sys.stderr):  # nothing of the caller's pending output goes twice
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    try:
        pid = os.fork()
    except OSError:
        os.close(log)
        os.close(null)
        raise
    if pid:
        os.close(log)
        os.close(null)
        return Forked(pid)
    code = 1  # the child: never returns into the caller's code
    try:
        os.setsid()
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.closerange(3, _max_fd())  # as close_fds: the caller's pipes and files are not held open
        sys.stdout = open(1, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False)
        sys.stderr = open(2, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False)
        os.chdir(folder)
        os.environ["QHYBRID_HOME"] = home
        sys.argv = [sys.executable, "-m", "qhybrid.jobs.supervisor", name]
        from qhybrid.jobs import supervisor  # start-up: only the forked child pays for its imports

        code = supervisor.main([name])
    except BaseException:  # noqa: BLE001 - the supervisor's own failure, in its log
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (AttributeError, OSError, ValueError):
                pass
        os._exit(code)


def _max_fd() -> int:
    try:
        return min(os.sysconf("SC_OPEN_MAX"), 1 << 16)
    except (ValueError, OSError):  # pragma: no cover
        return 1024


def start_supervisor(name: str, *, mode: str = "exec") -> None:
    """Start the detached supervisor of the QUEUED job ``name`` and record its pid and start time.

    Raises:
        JobError: it could not be started (the job is then FAILED, with the reason).
    """
    try:
        proc = start(name, mode=mode)
    except OSError as err:
        transition(name, JobState.FAILED, reason=f"could not start the supervisor: {err}")
        raise JobError(f"job {name!r}: could not start its supervisor: {err}") from None
    SUPERVISORS[name] = proc
    started = procs.start_time(proc.pid) or "exited"  # already gone: never mistake a reused pid for it
    store.update(name, supervisor_pid=proc.pid, supervisor_start=started)
