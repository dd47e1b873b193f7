"""Per-job dependency environments: Braket's ``requirements.txt`` without containers.

Braket's job container installs every ``requirements.txt`` found in the job's
source (``@hybrid_job(dependencies=...)`` writes one). Here each distinct set
of requirements gets a virtual environment layered on the caller's
interpreter: the new environment sees every package the caller has
(``--system-site-packages``; for a caller that itself runs in a virtual
environment, a ``.pth`` file adds the caller's site folders after the new
environment's own), pip installs
only what is missing or pinned differently, and the environment is built once,
cached under ``$QHYBRID_HOME/envs/<hash>/`` by the requirements' hash, and
reused by later jobs. The supervisor builds it before any script starts; a
failed install fails the job with pip's own message.

Example:
    >>> reqs = requirements_of(Path("my_job_folder"))     # doctest: +SKIP
    >>> python = ensure(reqs, log=print)                   # doctest: +SKIP
"""
from __future__ import annotations

import hashlib
import os
import shutil
import signal
import site
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from qhybrid.errors import JobError
from qhybrid.jobs import contract, requirements

REQUIREMENTS = "requirements.txt"
_READY = "qhybrid-env-ready"
_IGNORED_DIRS = {"__pycache__", ".git", ".venv", "qhybrid-local", "node_modules"}
PIP_TIMEOUT_S = 1800


class EnvironmentBuildError(JobError):
    """Installing a job's requirements failed (the message holds pip's last lines)."""


class EnvironmentStopped(JobError):
    """Building a job's environment was stopped (cancel, max_runtime, budget): pip was ended."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _pip(argv: list[str], *, stop, watch) -> tuple[int, str]:
    """Run pip in a process group of its own that dies with us, polling ``stop()`` (a reason to
    stop, or None) every 0.1 s; return its exit code and output.

    Raises:
        EnvironmentStopped: when ``stop()`` gave a reason (pip and its children were killed).
        subprocess.TimeoutExpired: after ``PIP_TIMEOUT_S``.
    """
    from qhybrid.jobs import procs

    def child_setup():  # between fork and exec: its own group (killed whole), dies with the supervisor
        os.setpgid(0, 0)
        procs.die_with_parent()

    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                preexec_fn=child_setup, close_fds=True)
        if watch is not None:
            watch([[proc.pid, procs.start_time(proc.pid)]])
        deadline = time.monotonic() + PIP_TIMEOUT_S
        try:
            while proc.poll() is None:
                reason = stop() if stop is not None else None
                if reason or time.monotonic() > deadline:
                    procs.signal_group(proc.pid, signal.SIGKILL)
                    proc.wait()
                    if reason:
                        raise EnvironmentStopped(reason)
                    raise subprocess.TimeoutExpired(argv, PIP_TIMEOUT_S)
                time.sleep(0.1)
        finally:
            procs.signal_group(proc.pid, signal.SIGKILL)  # whatever pip left in its group
        out.seek(0)
        return proc.returncode, out.read().decode("utf-8", "replace")


def parsed_requirements(source: Path) -> requirements.Parsed:
    """Read every ``requirements.txt`` in a source folder (sorted by path) under the policy of
    ``qhybrid.jobs.requirements``: nested files inlined, local files made absolute.

    Raises:
        SpecError: a file that cannot be read, or a line the policy refuses (one line).
    """
    out = requirements.Parsed()
    if not source.is_dir():
        return out
    for path in sorted(source.rglob(REQUIREMENTS)):
        if _IGNORED_DIRS & set(path.relative_to(source).parts[:-1]):
            continue
        requirements.parse(path, source, out)
    return out


def requirements_of(source: Path) -> list[str]:
    """Return the requirement lines of every ``requirements.txt`` in a source folder (see
    ``parsed_requirements``); comments and blank lines dropped; a single-file source has none."""
    return parsed_requirements(source).lines


def key(requirements: list[str], python: str | None = None, *, constraints=(), files=()) -> str:
    """Return the cache key of an environment: a hash of the requirements, constraints, the content
    of the local files they name (``files``: ``path sha256`` lines) and the base interpreter."""
    text = "\n".join([python or sys.executable, sys.version, *requirements, "-c", *constraints, "--", *files])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def attach(source: Path, extra: dict | None) -> dict:
    """Return ``extra`` with ``environment`` (requirements, constraints, key) when the source has
    requirements.

    Raises:
        SpecError: a requirements file the policy refuses (before anything is written).
    """
    extra = dict(extra or {})
    parsed = parsed_requirements(source)
    if parsed.lines:
        env = {"requirements": parsed.lines,
               "key": key(parsed.lines, constraints=parsed.constraints, files=parsed.fingerprint())}
        if parsed.constraints:
            env["constraints"] = parsed.constraints
        extra["environment"] = env
    return extra


def env_dir(env_key: str) -> Path:
    """Return the folder of the environment ``env_key`` under ``$QHYBRID_HOME/envs``."""
    from qhybrid.jobs import instances

    return instances.home() / "envs" / env_key


def python_of(folder: Path) -> Path:
    return folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _parent_site_dirs() -> list[str]:
    dirs = [*site.getsitepackages(), site.getusersitepackages()]
    return [d for d in dict.fromkeys(dirs) if d and os.path.isdir(d)]


def _site_packages(python: Path) -> Path:
    out = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, timeout=60,
    )
    return Path(out.stdout.strip())


def _tail(text: str, lines: int = 12) -> str:
    kept = [line for line in text.strip().splitlines() if line.strip()]
    errors = [line for line in kept if line.startswith("ERROR")]
    return " | ".join(errors or kept[-lines:])


def ensure(requirements: list[str], *, env_key: str | None = None, log=None, stop=None, watch=None,
           constraints: list[str] | None = None) -> Path:
    """Return the interpreter of the environment for ``requirements``, building it if needed.

    Args:
        requirements: requirement lines (pip's requirements-file syntax).
        env_key: the cache key (default: ``key(requirements)``).
        log: a callable receiving progress lines.
        stop: a callable polled while pip runs: a reason (text) to stop the build, or None.
        watch: a callable told ``[[pgid, start]]`` of pip's process group (the job's watchdog).
        constraints: constraint lines (pip's ``-c`` file), written beside the requirements.

    Returns:
        The path of the environment's ``python``.

    Raises:
        EnvironmentBuildError: when creating the environment or installing fails (pip's message).
        EnvironmentStopped: when ``stop`` asked to stop (pip ended; nothing is cached).
    """
    log = log or (lambda _line: None)
    env_key = env_key or key(requirements)
    folder = env_dir(env_key)
    python = python_of(folder)
    if (folder / _READY).is_file() and python.exists():
        log(f"qhybrid: using environment {folder}")
        return python
    folder.parent.mkdir(mode=contract.DIR_MODE, parents=True, exist_ok=True)  # private, as the job store
    building = folder.parent / f".{env_key}.{os.getpid()}.{time.monotonic_ns()}"
    log(f"qhybrid: building environment {folder} for: {', '.join(requirements)}")
    try:
        _make_venv(building)
        _install(building, requirements, constraints, log=log, stop=stop, watch=watch)
        contract.write_atomic(building / _READY, env_key)
        try:
            os.rename(building, folder)  # atomic publication; another job may have won the race
        except OSError:
            if not (folder / _READY).is_file():
                raise
    except subprocess.CalledProcessError as err:
        raise EnvironmentBuildError(f"creating the environment failed: {_tail(err.stderr or str(err))}") from None
    except subprocess.TimeoutExpired:
        raise EnvironmentBuildError(f"installing the requirements took longer than {PIP_TIMEOUT_S} s") from None
    finally:
        shutil.rmtree(building, ignore_errors=True)
    # the venv's own paths were made inside the temporary folder: it is relocated by name only
    _fix_relocated(folder, building)
    log(f"qhybrid: environment ready: {folder}")
    return python


def _make_venv(building: Path) -> None:
    """A private venv without pip at ``building`` that sees the caller's packages after its own: the
    system site packages, or, for a caller in a venv, a ``.pth`` naming that venv's site folders.

    Raises:
        subprocess.CalledProcessError, subprocess.TimeoutExpired: ``python -m venv`` failed or hung.
    """
    in_venv = sys.prefix != sys.base_prefix
    layer = [] if in_venv else ["--system-site-packages"]  # a venv caller is layered by a .pth instead
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", *layer, str(building)],
        capture_output=True, text=True, check=True, timeout=300,
    )
    os.chmod(building, contract.DIR_MODE)
    if in_venv:  # the caller's own site folders (and their .pth files: editable installs) after ours
        lines = [f"import site; site.addsitedir({d!r})" for d in _parent_site_dirs()]
        target = _site_packages(python_of(building))
        contract.write_atomic(target / "_qhybrid_parent.pth", "\n".join(lines) + "\n")


def _install(building: Path, requirements: list[str], constraints: list[str] | None, *, log, stop, watch) -> None:
    """pip-install ``requirements`` (under ``constraints``) into the venv at ``building``; pip's last
    20 lines go to ``log``.

    Raises:
        EnvironmentBuildError: pip failed (its message); EnvironmentStopped: ``stop`` asked to stop.
        subprocess.TimeoutExpired: pip ran past its limit.
    """
    lines = list(requirements)
    if constraints:
        contract.write_atomic(building / "constraints.txt", "\n".join(constraints) + "\n")
        lines.insert(0, f"-c {building / 'constraints.txt'}")
    contract.write_atomic(building / REQUIREMENTS, "\n".join(lines) + "\n")
    code, output = _pip(
        [str(python_of(building)), "-m", "pip", "install", "--disable-pip-version-check",
         "--no-input", "-r", str(building / REQUIREMENTS)], stop=stop, watch=watch,
    )
    for line in output.splitlines()[-20:]:
        log(line)
    if code != 0:
        raise EnvironmentBuildError(f"pip install failed: {_tail(output)}")


def _fix_relocated(folder: Path, old: Path) -> None:
    """Rewrite the old folder name in the venv's activation scripts and script shebangs."""
    bindir = folder / ("Scripts" if os.name == "nt" else "bin")
    for path in [*bindir.iterdir(), folder / "pyvenv.cfg"] if bindir.is_dir() else []:
        if path.is_symlink() or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if str(old) in text:
            path.write_text(text.replace(str(old), str(folder)), encoding="utf-8")
