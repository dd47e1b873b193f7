"""A job's entry point, checked against its source before anything is written."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from qhybrid.errors import SpecError

_ENTRY_RE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def _modules(root: Path) -> list[str]:
    """List importable module names below a package folder (for error messages)."""
    out = []
    for p in sorted(root.rglob("*.py")):
        rel = p.relative_to(root.parent).with_suffix("")
        parts = [x for x in rel.parts if x != "__init__"]
        out.append(".".join(parts))
    return out[:20]


def resolve_entry_point(source: Path, entry_point: str | None) -> str:
    """Check that the entry point's module (and function) exists in the source; return it.

    Raises:
        SpecError: naming the missing module or function and the modules that exist.
    """
    default = source.stem if source.is_file() else source.name
    if entry_point is not None and not isinstance(entry_point, str):
        raise SpecError(f"entry_point must be a string like 'pkg.module' or 'pkg.module:function', got {entry_point!r}")
    entry = entry_point or default
    module, _, func = entry.partition(":")
    if not _ENTRY_RE.fullmatch(module) or (func and not func.isidentifier()):
        raise SpecError(f"entry point {entry!r} must look like 'pkg.module' or 'pkg.module:function'")
    parts = module.split(".")
    root = source.parent
    if source.is_file():
        candidates = [source] if parts == [source.stem] else []
        valid = [source.stem]
    else:
        base = root.joinpath(*parts)
        candidates = [p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()]
        if not func and base.is_dir():  # a package runs through its __main__.py
            candidates = [base / "__main__.py"] if (base / "__main__.py").is_file() else []
        valid = _modules(source)
        if parts[0] != source.name:
            candidates = []
    if not candidates:
        raise SpecError(f"entry point module {module!r} not found in {source}; modules there: {', '.join(valid)}")
    if func:
        try:
            tree = ast.parse(candidates[0].read_text(encoding="utf-8"))
        except SyntaxError as err:
            raise SpecError(f"entry point module {module!r} has a syntax error: {err}") from None
        names = {
            n.name
            for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        } | {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
        names |= {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names}
        if func not in names:
            raise SpecError(f"entry point function {func!r} not found in module {module!r} ({candidates[0]})")
    return entry
