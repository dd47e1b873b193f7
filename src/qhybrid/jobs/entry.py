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
import traceback  # before the source folder is first on sys.path (a job file named traceback.py)

from qhybrid.jobs import contract, script

HYBRID_ENTRY_ENV = "QHYBRID_HYBRID_ENTRY"
#: A job module that sets this global to True declares that every file it writes is closed when
#: it returns; run as its own process, the job then ends without Python's interpreter teardown
#: (atexit handlers and the standard streams as at any exit). The QAOA workload does: tearing
#: down numba's and LLVM's objects costs a small job 0.3-0.8 s. Never in-process (the caller lives on).
EXIT_WITHOUT_TEARDOWN = "QHYBRID_EXIT_WITHOUT_TEARDOWN"


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


def run(source_dir: str, entry_point: str, call_file: str | None = None) -> dict | None:
    """Import and run the entry point with ``source_dir`` first on ``sys.path``; return a module
    entry point's globals after its run (None for a ``module:function`` one)."""
    if source_dir not in sys.path:
        sys.path.insert(0, source_dir)
    module, _, func = entry_point.partition(":")
    shadowing = _shadowing_file(source_dir, module)
    if not func:
        sys.argv = [module]
        if shadowing is not None:  # e.g. a job script named json.py: run that file, not the module json
            return runpy.run_path(shadowing, run_name="__main__")
        return runpy.run_module(module, run_name="__main__", alter_sys=True)
    if call_file is not None:  # a hybrid_job module that calls its own function at import must not resubmit
        os.environ[HYBRID_ENTRY_ENV] = entry_point
    target = getattr(_load_file(shadowing) if shadowing else importlib.import_module(module), func)
    target = getattr(target, "__wrapped__", target)
    if call_file is None:
        value = target(**hyperparameter_kwargs(target))
        if value is not None and not (script.results_dir() / contract.RESULTS_FILE).exists():
            script.save_job_result(value if isinstance(value, dict) else {"result": value})
        return None
    call = load_call(call_file)
    value = target(*call.get("args", []), **call.get("kwargs", {}))
    if value is None:
        return None
    script.save_return_value(value, data_format=call.get("result_format", "plaintext"), wrap=True,
                             hint="hybrid_job(..., pickle_result=True)")
    return None


def exit_without_teardown() -> None:
    """End this process as a normal exit would (atexit handlers run, standard streams flushed),
    skipping only the interpreter's teardown of every module and object."""
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    os._exit(0)


def _own_frame(frame) -> bool:
    """Whether a traceback frame is the runner's (this module, runpy, importlib), not the job's."""
    name = frame.f_code.co_filename
    return name == __file__ or name.startswith(("<frozen runpy>", "<frozen importlib")) or \
        os.path.basename(name) == "runpy.py"


def print_job_traceback(err: BaseException) -> None:
    """Print ``err``'s traceback on stderr as Python would, less the runner's leading frames (so the
    job's log shows its own script's frames only; all of them when none is the script's)."""
    tb = err.__traceback__
    while tb is not None and _own_frame(tb.tb_frame):
        tb = tb.tb_next
    traceback.print_exception(type(err), err, tb or err.__traceback__, file=sys.stderr)
    sys.stderr.flush()


if __name__ == "__main__":
    try:
        namespace = run(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
    except Exception as err:  # noqa: BLE001 - the job failed: its own traceback, as an uncaught one, exit 1
        print_job_traceback(err)
        sys.exit(1)
    if namespace and namespace.get(EXIT_WITHOUT_TEARDOWN) is True:
        exit_without_teardown()
