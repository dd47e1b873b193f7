"""Run a job's entry point: ``pkg.module`` as ``__main__`` or ``pkg.module:function``.

Used as ``python -m qhybrid.jobs.entry SOURCE_DIR ENTRY_POINT [CALL_FILE]`` by
the local backend, and called directly by the in-process backend. A call file
(written by ``hybrid_job``) holds the function's arguments and asks for its
return value to be saved as the job result.
"""
from __future__ import annotations

import importlib
import json
import os
import runpy
import sys

from qhybrid.jobs import script

HYBRID_ENTRY_ENV = "QHYBRID_HYBRID_ENTRY"


def load_call(path: str) -> dict:
    """Read a hybrid_job call file: ``{"args", "kwargs", "result_format"}``."""
    with open(path, encoding="utf-8") as f:
        call = json.load(f)
    if call.get("encoding") == "pickle":
        import base64
        import pickle

        call["args"], call["kwargs"] = pickle.loads(base64.b64decode(call.pop("payload")))
    return call


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
    if not func:
        sys.argv = [module]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        return
    if call_file is not None:  # a hybrid_job module that calls its own function at import must not resubmit
        os.environ[HYBRID_ENTRY_ENV] = entry_point
    target = getattr(importlib.import_module(module), func)
    target = getattr(target, "__wrapped__", target)
    if call_file is None:
        value = target(**hyperparameter_kwargs(target))
        if value is not None and not (script.results_dir() / "results.json").exists():
            script.save_job_result(value if isinstance(value, dict) else {"result": value})
        return
    call = load_call(call_file)
    value = target(*call.get("args", []), **call.get("kwargs", {}))
    if value is None:
        return
    fmt = call.get("result_format", "plaintext")
    data = {"result": value}
    if fmt == "plaintext":
        try:
            json.dumps(data)
        except (TypeError, ValueError):
            raise TypeError(
                f"the job's return value ({type(value).__name__}) is not JSON-serializable; "
                "return JSON data or use hybrid_job(..., pickle_result=True)"
            ) from None
    script.save_job_result(data, data_format=fmt)


if __name__ == "__main__":
    run(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
