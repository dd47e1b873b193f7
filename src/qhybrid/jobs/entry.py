"""Run a job's entry point: ``pkg.module`` as ``__main__`` or ``pkg.module:function``.

Used as ``python -P -m qhybrid.jobs.entry SOURCE_DIR ENTRY_POINT [CALL_FILE]`` by
the local backend, and called directly by the in-process backend. ``-P`` keeps the
source folder (the working folder) off the front of ``sys.path`` while this runner
imports what it needs; only then is the source folder put first, so a job file named
like a standard module (``json.py``) is the job's own business and cannot break the runner. A call file
(written by ``hybrid_job``) holds the function's arguments and asks for its
return value to be saved as the job result.
"""
from __future__ import annotations

import base64  # noqa: F401  (imported before the source folder is on sys.path: the codec needs them)
import importlib
import importlib.util
import json
import os
import pickle  # noqa: F401
import runpy
import sys

from qhybrid.jobs import contract, script

HYBRID_ENTRY_ENV = "QHYBRID_HYBRID_ENTRY"


def load_call(path: str) -> dict:
    """Read a hybrid_job call file: ``{"args", "kwargs", "result_format"}``."""
    with open(path, encoding="utf-8") as f:
        call = json.load(f)
    if call.get("encoding") == "pickle":  # written by hybrid_job for this job, in its own folder
        call["args"], call["kwargs"] = pickle.loads(base64.b64decode(call.pop("payload")))
    return call


def _shadowing_file(source_dir: str, module: str) -> str | None:
    """The job's own top-level file when its name is a module already imported (``json.py``)."""
    path = os.path.join(source_dir, f"{module}.py")
    if "." in module or module not in sys.modules or not os.path.isfile(path):
        return None
    return None if getattr(sys.modules[module], "__file__", None) == path else path


def _load_file(path: str):
    spec = importlib.util.spec_from_file_location(f"_qhybrid_job_{os.path.basename(path)[:-3]}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def hyperparameter_kwargs(target) -> dict[str, str]:
    """The hyperparameters a ``module:function`` entry point takes by name (all of them for ``**kwargs``),
    as Braket's container passes them."""
    import inspect

    try:
        params = inspect.signature(target).parameters.values()
    except (TypeError, ValueError):
        return {}
    hp = script.hyperparameters()
    if any(p.kind == p.VAR_KEYWORD for p in params):
        return dict(hp)
    names = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return {k: v for k, v in hp.items() if k in names}


def run(source_dir: str, entry_point: str, call_file: str | None = None) -> None:
    """Import and run the entry point with ``source_dir`` first on ``sys.path``."""
    if source_dir not in sys.path:
        sys.path.insert(0, source_dir)
    module, _, func = entry_point.partition(":")
    shadowing = _shadowing_file(source_dir, module)
    if not func:
        sys.argv = [module]
        if shadowing is not None:  # e.g. a job script named json.py: run that file, not the module json
            runpy.run_path(shadowing, run_name="__main__")
        else:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        return
    if call_file is not None:  # a hybrid_job module that calls its own function at import must not resubmit
        os.environ[HYBRID_ENTRY_ENV] = entry_point
    target = getattr(_load_file(shadowing) if shadowing else importlib.import_module(module), func)
    target = getattr(target, "__wrapped__", target)
    if call_file is None:
        value = target(**hyperparameter_kwargs(target))
        if value is not None and not (script.results_dir() / contract.RESULTS_FILE).exists():
            script.save_job_result(value if isinstance(value, dict) else {"result": value})
        return
    call = load_call(call_file)
    value = target(*call.get("args", []), **call.get("kwargs", {}))
    if value is None:
        return
    script.save_return_value(value, data_format=call.get("result_format", "plaintext"), wrap=True,
                             hint="hybrid_job(..., pickle_result=True)")


if __name__ == "__main__":
    run(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
