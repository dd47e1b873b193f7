"""What a job's ``requirements.txt`` may say: pip's file syntax, read by us first, under a policy.

pip reads a requirements file with all the power of its command line: ``-r /etc/passwd`` reads any
file (and a line of it lands in the job's record as pip's error), options change where pip looks
and what it runs. So the runtime reads the files itself, at submission, before anything is written,
and passes pip one flat list:

- ``-r``/``--requirement`` and ``-c``/``--constraint``: files inside the job's source folder only,
  resolved relative to the file that names them (as pip does); ``-r`` is inlined, ``-c`` becomes
  the environment's constraints. A path that leaves the folder (``/etc/passwd``, ``../x``, a link
  out) is refused in one line.
- Allowed as they are: ``-i``/``--index-url``, ``--extra-index-url``, ``--trusted-host``,
  ``--no-index``, ``--pre``, ``--prefer-binary``, ``--only-binary``, ``--no-binary``,
  ``--require-hashes``; ``-f``/``--find-links`` with a URL or a local folder (made absolute).
- Every other option (``-e``, ``--global-option``, ``--config-settings``, ``--src``, ...) is
  refused, naming the option and the allowed ones.
- Local files (``./wheels/x.whl``, ``file:`` URLs, ``name @ file:...``, ``--find-links`` folders)
  are made absolute and their content hashed into the environment's cache key: a changed wheel
  builds a new environment instead of reusing the old one.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from urllib.parse import unquote, urlparse

from qhybrid.errors import SpecError

NESTED = {"-r": "requirement", "--requirement": "requirement", "-c": "constraint", "--constraint": "constraint"}
WITH_VALUE = {"-i", "--index-url", "--extra-index-url", "--trusted-host", "-f", "--find-links", "--only-binary",
              "--no-binary"}
FLAGS = {"--no-index", "--pre", "--prefer-binary", "--require-hashes"}
ALLOWED = sorted({*NESTED, *WITH_VALUE, *FLAGS})
_MAX_DEPTH = 10


class Parsed:
    """The flattened result: requirement lines, constraint lines, and the local files they name."""

    def __init__(self):
        self.lines: list[str] = []
        self.constraints: list[str] = []
        self.local: list[Path] = []  # files and folders whose content goes into the cache key

    def fingerprint(self) -> list[str]:
        """One ``path sha256`` line per local file (folders: each file in them), for the cache key."""
        out = []
        for path in sorted(set(self.local)):
            files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
            for f in files:
                try:
                    out.append(f"{f} {hashlib.sha256(f.read_bytes()).hexdigest()}")
                except OSError:
                    out.append(f"{f} unreadable")
        return out


def _split_option(line: str) -> tuple[str, str | None]:
    """``--opt=value`` / ``--opt value`` / ``-rvalue`` / ``-r value`` -> (option, value or None)."""
    if line.startswith("--"):
        cut = min((i for i in (line.find("="), line.find(" "), line.find("\t")) if i >= 0), default=len(line))
        return line[:cut], line[cut + 1:].strip() or None
    head, rest = line[:2], line[2:].strip()
    return head, rest.lstrip("= ").strip() or None


def _inside(path: Path, root: Path, *, what: str, where: Path) -> Path:
    resolved = path.resolve()
    if resolved != root and root not in resolved.parents:
        raise SpecError(f"{where}: {what} {str(path)!r} is outside the job's source folder {str(root)!r}; "
                        "a nested requirements or constraints file must be inside it")
    if not resolved.is_file():
        raise SpecError(f"{where}: {what} {str(path)!r} does not exist")
    return resolved


def _local(value: str, base: Path) -> Path | None:
    """The local path a requirement or find-links value names (``file:`` URL or a path), else None."""
    if value.startswith("file:"):
        return Path(unquote(urlparse(value).path))
    if "://" in value or not (value.startswith((".", "/", "~")) or value.endswith((".whl", ".tar.gz", ".zip"))):
        return None
    path = Path(os.path.expanduser(value))
    return path if path.is_absolute() else base / path


def _requirement(line: str, base: Path, out: Parsed) -> str:
    """A requirement line, its local file (if any) made absolute and recorded for the key."""
    name, at, target = line.partition(" @ ")
    value = target.strip() if at else line.split(" ", 1)[0]
    path = _local(value, base)
    if path is None:
        return line
    out.local.append(path.resolve())
    absolute = path.resolve().as_uri() if value.startswith("file:") else str(path.resolve())
    return f"{name.strip()} @ {absolute}" if at else line.replace(value, absolute, 1)


def _option(line: str, file: Path, root: Path, out: Parsed, depth: int) -> None:
    option, value = _split_option(line)
    if option in NESTED:
        if not value:
            raise SpecError(f"{file}: {option} needs a file name")
        nested = _inside(file.parent / value, root, what=f"{option}", where=file)
        if NESTED[option] == "requirement":
            _read(nested, root, out, depth + 1)
        else:
            sub = Parsed()
            _read(nested, root, sub, depth + 1)
            out.constraints += sub.lines
            out.local += sub.local
        return
    if option in FLAGS:
        out.lines.append(option)
        return
    if option not in WITH_VALUE:
        raise SpecError(f"{file}: pip option {option!r} is not allowed in a job's requirements; "
                        f"allowed: {', '.join(ALLOWED)}")
    if not value:
        raise SpecError(f"{file}: {option} needs a value")
    if option in ("-f", "--find-links") and (value.startswith("file:") or "://" not in value):
        path = Path(unquote(urlparse(value).path)) if value.startswith("file:") else Path(os.path.expanduser(value))
        path = (path if path.is_absolute() else file.parent / path).resolve()
        out.local.append(path)
        value = str(path)
    out.lines.append(f"{option} {value}")


def _read(file: Path, root: Path, out: Parsed, depth: int = 0) -> None:
    if depth > _MAX_DEPTH:
        raise SpecError(f"{file}: requirements files nest more than {_MAX_DEPTH} deep (a loop?)")
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise SpecError(f"cannot read requirements file {str(file)!r}: {err}") from None
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-"):
            _option(line, file, root, out, depth)
        else:
            out.lines.append(_requirement(line, file.parent, out))


def parse(file: Path, root: Path, out: Parsed | None = None) -> Parsed:
    """Read one requirements file of a source folder ``root`` under the policy (module docstring).

    Raises:
        SpecError: one line naming the file and what is refused.
    """
    out = out or Parsed()
    _read(Path(file), Path(root).resolve(), out)
    return out
