"""In-process backend: the script runs in this interpreter, for tests and debugging.

Same supervisor, same files; the job environment is applied for the run and
restored afterwards (environment, sys.path, sys.argv, cwd, modules loaded from
the job's source). ``max_runtime``, ``max_cost`` and ``cancel`` cannot
interrupt a script running in the caller's own thread.

No process outlives the job here either: while the script runs this process is
the child subreaper (orphans of the job's children come back to it), and when
the script returns every process started since it began is ended (SIGTERM, then
SIGKILL) as the local backend's supervisor does; the caller's own children from
before the job, and what runs under them, are spared. A process another thread
of the caller starts while the job runs cannot be told apart and is ended too.
"""
from __future__ import annotations

import contextlib
import io
import os
import sys
import traceback

from qhybrid.jobs import entry, procs
from qhybrid.jobs.backends.base import Backend as BaseBackend
from qhybrid.jobs.supervisor import Supervisor


class _LineWriter(io.TextIOBase):
    def __init__(self, rank, on_line):
        self._rank, self._on_line, self._buf = rank, on_line, ""

    def writable(self):
        return True

    def write(self, text):
        self._buf += text
        while "\n" in self._buf:
            line, self._buf = self._buf.split("\n", 1)
            self._on_line(self._rank, line)
        return len(text)

    def flush(self):
        pass

    def close_line(self):
        if self._buf:
            self._on_line(self._rank, self._buf)
            self._buf = ""


class Backend(BaseBackend):
    """Runs each ProcessSpec's entry point synchronously inside ``launch``."""

    max_processes = 1

    def __init__(self):
        self._codes: dict[int, int | None] = {}
        self.interrupted = False

    def launch(self, processes, on_line) -> None:
        for spec in processes:
            self._codes[spec.rank] = self._run(spec, on_line)

    def _run(self, spec, on_line) -> int:
        spare = procs.children() | {pid for pid, _start in procs.descendants()}  # the caller's, not the job's
        with procs.subreaper():
            try:
                code = self._call(spec, on_line)
            finally:
                left = procs.end_descendants(grace=1.0, spare=spare)
        if left:
            on_line(spec.rank, f"qhybrid: ended {left} process(es) the job left behind")
        return code

    def _call(self, spec, on_line) -> int:
        """Run the entry point with the job's environment, cwd and output; restore them after."""
        at = spec.argv.index("qhybrid.jobs.entry")  # [python, -P, -m, qhybrid.jobs.entry, source, entry, (call)]
        source_dir, entry_point = spec.argv[at + 1], spec.argv[at + 2]
        call_file = spec.argv[at + 3] if len(spec.argv) > at + 3 else None
        saved_env, saved_path, saved_argv, saved_cwd = dict(os.environ), list(sys.path), list(sys.argv), os.getcwd()
        saved_modules = set(sys.modules)
        writer = _LineWriter(spec.rank, on_line)
        code = 0
        try:
            os.environ.clear()
            os.environ.update(spec.env)
            os.chdir(spec.cwd)
            with contextlib.redirect_stdout(writer), contextlib.redirect_stderr(writer):
                try:
                    entry.run(source_dir, entry_point, call_file)
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                    if exc.code not in (None, 0) and not isinstance(exc.code, int):
                        print(exc.code, file=sys.stderr)
                except KeyboardInterrupt:  # recorded as the job's failure, then re-raised by Job.create
                    traceback.print_exc()
                    self.interrupted = True
                    code = 130
                except BaseException:  # the job's failure is data, not the caller's exception
                    traceback.print_exc()
                    code = 1
            writer.close_line()
        finally:
            os.chdir(saved_cwd)
            os.environ.clear()
            os.environ.update(saved_env)
            sys.path[:], sys.argv[:] = saved_path, saved_argv
            for name in set(sys.modules) - saved_modules:
                mod_file = getattr(sys.modules.get(name), "__file__", None) or ""
                if mod_file.startswith(source_dir):
                    del sys.modules[name]
        return code

    def poll(self) -> dict[int, int | None]:
        return dict(self._codes)

    def groups(self) -> list[list]:
        return []  # never record the caller itself as something to kill

    def kill(self, grace: float = 3.0) -> None:
        return None


def run_job(name: str) -> None:
    """Run the QUEUED job ``name`` to its end in this interpreter (``in_process=True``).

    Raises:
        KeyboardInterrupt: a Ctrl-C during the job, re-raised after the job is recorded FAILED.
    """
    backend = Backend()
    Supervisor(name, backend=backend).run()
    if backend.interrupted:  # Ctrl-C belongs to the caller, after the job is recorded FAILED
        raise KeyboardInterrupt
