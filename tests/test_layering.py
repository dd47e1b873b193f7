"""The house's layering, read from the source with ``ast`` (nothing is imported).

What counts:
- an *import* is every ``import`` / ``from ... import`` statement naming a ``qhybrid`` module,
  at module level or inside a function or class alike (an import hidden in a function still
  runs up a floor or closes a loop); ``if TYPE_CHECKING:`` blocks do not count, nor do
  ``importlib.import_module`` calls (plugin look-ups by name, e.g. ``backends.get_backend``);
- ``from a.b import c`` is an edge to ``a.b.c`` when that is a module, else to ``a.b``;
  importing ``a.b.c`` does not count as importing its parent packages;
- the runtime, ``qhybrid.jobs``, imports no workload, engine (sim, qaoa, qml, plugin),
  estimate, CLI, UI, Braket or submission module;
- no import loop (a strongly connected set of two or more modules) among ``qhybrid`` modules;
- only ``qhybrid.devices`` asks torch whether there is a CUDA GPU (``<x>.cuda.is_available``,
  ``device_count``, ``current_device``, ``get_device_capability``, ``get_device_name``, read or
  called): everything else asks ``devices`` (``require_cuda``, ``torch_device``, ``cuda_expected``,
  ``gpu_kernel_path``, ...) or reads the Target.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
ABOVE_RUNTIME = ("workloads", "sim", "qaoa", "qml", "plugin", "estimate", "cli", "ui", "braket", "submit", "views", "mlflow_export")


def _modules(src: Path) -> dict[str, Path]:
    out = {}
    for path in src.joinpath("qhybrid").rglob("*.py"):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _targets(node, module: str, is_package: bool, known) -> list[str]:
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = module.split(".") if is_package else module.split(".")[:-1]
        if node.level:
            base = base[: len(base) - (node.level - 1)]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        names = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in known else prefix for a in node.names]
    out = []
    for name in names:
        if name.split(".")[0] != "qhybrid":
            continue
        while name not in known and "." in name:
            name = name.rsplit(".", 1)[0]
        out.append(name)
    return out


def import_graph(src: Path = SRC) -> dict[str, set[str]]:
    """Every qhybrid module's qhybrid imports (module level and inside functions)."""
    known = _modules(src)
    graph: dict[str, set[str]] = defaultdict(set)

    def walk(node, module, is_package):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                graph[module].update(t for t in _targets(child, module, is_package, known) if t != module)
            walk(child, module, is_package)

    for module, path in known.items():
        graph[module]  # noqa: B018 - every module is a node
        walk(ast.parse(path.read_text(encoding="utf-8")), module, path.name == "__init__.py")
    return graph


CUDA_QUESTIONS = frozenset({"is_available", "device_count", "current_device", "get_device_capability",
                            "get_device_name"})
CUDA_HOME = "qhybrid.devices"


def cuda_questions(src: Path = SRC) -> list[str]:
    """``module:line`` of every ``<x>.cuda.<question>`` outside ``devices`` (a question about this
    machine's GPUs; ``torch.cuda.set_device`` or ``mem_get_info`` act on or measure a GPU already chosen)."""
    out = []
    for module, path in sorted(_modules(src).items()):
        if module == CUDA_HOME:
            continue
        lines = sorted({node.lineno for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                        if isinstance(node, ast.Attribute) and node.attr in CUDA_QUESTIONS
                        and isinstance(node.value, ast.Attribute) and node.value.attr == "cuda"})
        out += [f"{module}:{line}" for line in lines]
    return out


def _floor(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def imports_up(graph) -> list[str]:
    """The runtime's imports of a module above it."""
    return sorted(f"{m} -> {t}" for m, ts in graph.items() if _floor(m) == "jobs"
                  for t in ts if _floor(t) in ABOVE_RUNTIME)


def loops(graph) -> list[list[str]]:
    """Strongly connected sets of two or more modules (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


@pytest.fixture(scope="module")
def graph():
    return import_graph()


def test_the_runtime_imports_nothing_above_it(graph):
    assert imports_up(graph) == []


def test_no_import_loop_among_qhybrid_modules(graph):
    assert loops(graph) == []


def test_only_devices_asks_whether_there_is_a_cuda_gpu():
    assert cuda_questions() == []


def test_the_checks_see_what_they_look_for(tmp_path):
    """An import inside a function counts, both for a floor and for a loop; a CUDA question outside
    devices is found, an action on a chosen GPU is not."""
    pkg = tmp_path / "qhybrid"
    for sub in ("jobs", "estimate"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "jobs" / "store.py").write_text("def f():\n    from qhybrid.estimate import jobs\n")
    (pkg / "estimate" / "jobs.py").write_text("from qhybrid.jobs import store\n")
    graph = import_graph(tmp_path)
    assert imports_up(graph) == ["qhybrid.jobs.store -> qhybrid.estimate.jobs"]
    assert loops(graph) == [["qhybrid.estimate.jobs", "qhybrid.jobs.store"]]
    (pkg / "jobs" / "script.py").write_text("import torch\nuse = torch.cuda.is_available()\ntorch.cuda.set_device(0)\n")
    (pkg / "devices.py").write_text("import torch\nn = torch.cuda.device_count()\n")
    assert cuda_questions(tmp_path) == ["qhybrid.jobs.script:2"]
