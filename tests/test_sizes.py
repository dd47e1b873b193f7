"""The house's size budget, read from the source with ``ast`` (nothing is imported).

- no function (or method, or nested function) in ``src/`` longer than ``FUNCTION_LINES`` lines,
  counted from its ``def`` to its last line (docstring included, decorators not);
- no module in ``src/`` longer than ``MODULE_LINES`` lines.

What is over budget today is listed below, by name, with its length and the reason it stays; the
lists can only shrink: an entry that grew, or that is back under budget (or gone), fails too, so
it is removed once its code is split.
"""
from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
FUNCTION_LINES = 80
MODULE_LINES = 400

#: ``module:qualified.name`` -> (lines today, why it stays whole for now)
ALLOWED_FUNCTIONS: dict[str, tuple[int, str]] = {}
#: ``module`` -> (lines today, why)
ALLOWED_MODULES: dict[str, tuple[int, str]] = {}


def _module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def function_lengths(src: Path = SRC) -> dict[str, int]:
    """``module:qualified.name`` -> lines, of every function in ``src/qhybrid``."""
    out = {}

    def walk(node, module, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    out[f"{module}:{name}"] = child.end_lineno - child.lineno + 1
                walk(child, module, f"{name}.")
            else:
                walk(child, module, prefix)

    for path in sorted(src.joinpath("qhybrid").rglob("*.py")):
        walk(ast.parse(path.read_text(encoding="utf-8")), _module_name(path, src), "")
    return out


def module_lengths(src: Path = SRC) -> dict[str, int]:
    """``module`` -> lines, of every module in ``src/qhybrid``."""
    return {_module_name(p, src): len(p.read_text(encoding="utf-8").splitlines())
            for p in sorted(src.joinpath("qhybrid").rglob("*.py"))}


def over_budget(lengths: dict[str, int], limit: int, allowed: dict[str, tuple[int, str]]) -> list[str]:
    """What breaks the budget: new items over ``limit``, allowed ones that grew, allowed ones no
    longer over it (or gone: drop them from the list)."""
    out = [f"{name}: {n} lines (budget {limit})" for name, n in sorted(lengths.items())
           if n > limit and name not in allowed]
    for name, (recorded, _why) in sorted(allowed.items()):
        n = lengths.get(name)
        if n is None or n <= limit:
            out.append(f"{name}: {'gone' if n is None else f'{n} lines'}, within budget: drop it from the allow-list")
        elif n > recorded:
            out.append(f"{name}: grew from {recorded} to {n} lines (allowed only to shrink)")
    return out


def test_no_function_over_budget():
    assert over_budget(function_lengths(), FUNCTION_LINES, ALLOWED_FUNCTIONS) == []


def test_no_module_over_budget():
    assert over_budget(module_lengths(), MODULE_LINES, ALLOWED_MODULES) == []


def test_the_checks_see_what_they_look_for(tmp_path):
    """A long nested function and a long module are found; the allow-list only shrinks."""
    pkg = tmp_path / "qhybrid"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    body = "\n".join(f"            x{i} = {i}" for i in range(5))
    (pkg / "a.py").write_text(f"class C:\n    def f(self):\n        def g():\n{body}\n        return 1\n")
    lengths = function_lengths(tmp_path)
    assert lengths == {"qhybrid.a:C.f": 8, "qhybrid.a:C.f.g": 6}
    assert over_budget(lengths, 6, {}) == ["qhybrid.a:C.f: 8 lines (budget 6)"]
    assert over_budget(lengths, 6, {"qhybrid.a:C.f": (7, "why")}) == [
        "qhybrid.a:C.f: grew from 7 to 8 lines (allowed only to shrink)"]
    assert over_budget(lengths, 8, {"qhybrid.a:C.f": (8, "why")}) == [
        "qhybrid.a:C.f: 8 lines, within budget: drop it from the allow-list"]
    assert module_lengths(tmp_path) == {"qhybrid": 0, "qhybrid.a": 9}
    assert over_budget(module_lengths(tmp_path), 8, {}) == ["qhybrid.a: 9 lines (budget 8)"]
