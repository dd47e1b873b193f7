"""Run a Jupyter notebook cell by cell in a fresh namespace, as a kernel would (for the Braket tests).

IPython magics (``%%time``, ``%matplotlib``, ``!cat``) are dropped. A cell tagged
``parameters`` is followed by the injected values (papermill's convention).
"""
from __future__ import annotations

import json
from pathlib import Path


def code_cells(path: Path) -> list[tuple[str, list[str]]]:
    """Return ``(source, tags)`` of each code cell of a notebook file."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    cells = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        kept = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
        cells.append((kept, cell.get("metadata", {}).get("tags", [])))
    return cells


def run_notebook(path: Path, parameters: dict | None = None) -> dict:
    """Execute every code cell of ``path`` in one namespace named ``__main__``; return the namespace."""
    namespace: dict = {"__name__": "__main__"}
    for index, (source, tags) in enumerate(code_cells(path)):
        exec(compile(source, f"{Path(path).name}[cell {index}]", "exec"), namespace)
        if "parameters" in tags and parameters:
            namespace.update(parameters)
    return namespace


def write_notebook(path: Path, cells: list[str | tuple[str, list[str]]]) -> Path:
    """Write a minimal nbformat-4 notebook of code cells (a tuple gives a cell its tags)."""
    out = []
    for index, cell in enumerate(cells):
        source, tags = (cell, []) if isinstance(cell, str) else cell
        out.append({"cell_type": "code", "execution_count": None, "id": f"cell-{index}", "metadata": {"tags": tags},
                    "outputs": [], "source": source.splitlines(keepends=True)})
    nb = {"cells": out, "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                                    "name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}
    Path(path).write_text(json.dumps(nb, indent=1) + "\n", encoding="utf-8")
    return Path(path)
