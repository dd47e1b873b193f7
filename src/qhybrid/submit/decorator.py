"""``@hybrid_job``: calling the decorated function submits it as a job (Braket's decorator).

The function travels by value: the call (function and arguments, as a
``functools.partial``) is pickled with cloudpickle, as Braket ships it, so a
function defined in a notebook cell, in IPython, inside a ``try`` or an ``if``,
or using globals set at run time works, and the job never imports the
caller's file (a notebook without a ``__main__`` guard does not resubmit
itself). In the job the function runs in the results folder, so files it
writes there are kept with the results; relative ``input_data`` paths appear
under the same relative names there (links into the input channels), as in
Braket. The arguments are recorded as the job's hyperparameters (stringified
as Braket does); a returned dict is the result as it is, other values are
saved as ``{"result": value}``.

Example:
    >>> @hybrid_job(device="local:qhybrid/qhybrid.cpu")     # doctest: +SKIP
    ... def train(steps=10):
    ...     return {"loss": 0.1}
    >>> train(steps=5).wait().result()                       # doctest: +SKIP
    {'loss': 0.1}
"""
from __future__ import annotations

import functools
import importlib
import inspect
import json
import os
import re
import sys
import sysconfig
import tempfile
import time
import warnings
from dataclasses import replace
from pathlib import Path

from qhybrid.errors import SpecError
from qhybrid.jobs.contract import format_name
from qhybrid.jobs.shipped import CALL, SHIPPED
from qhybrid.submit.job import Job
from qhybrid.submit.options import SubmitOptions

SOURCE_PACKAGE = "hybrid_job_source"
_ENTRY_TEMPLATE = '''"""Entry point written by qhybrid's @hybrid_job: runs the function it shipped by value."""
from qhybrid.jobs.shipped import run_shipped


def {name}():
    run_shipped(__file__)
'''


# -- on the caller's side -------------------------------------------------------------------------
def sanitize(value) -> str:
    """Return a hyperparameter value as Braket's decorator records it (a string, <= 2500 chars)."""
    text = str(value)
    for bad, good in (("\n", " "), ("$", "?"), ("(", "{"), ("&", "+"), ("`", "'"), (")", "}")):
        text = text.replace(bad, good)
    return text if len(text) <= 2500 else f"{text[:2477]}...{text[-20:]}"


def call_hyperparameters(fn, args: tuple, kwargs: dict) -> dict[str, str]:
    """Return the call's arguments by parameter name (defaults included), sanitised as Braket does.

    ``**kwargs`` are spread into their own names; ``*args`` and positional-only ones are not recorded.

    Raises:
        SpecError: when the arguments do not fit the function's signature.
    """
    signature = inspect.signature(fn)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as err:
        raise SpecError(f"{getattr(fn, '__name__', fn)!s}: {err}") from None
    bound.apply_defaults()
    out = {}
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
            out[name] = value
        elif kind == inspect.Parameter.VAR_KEYWORD:
            out.update(value)
        elif value not in ((), None):
            warnings.warn("positional-only and *args arguments are not recorded as hyperparameters", stacklevel=3)
    return {str(k): sanitize(v) for k, v in out.items()}


def default_job_name(fn) -> str:
    """Return ``<function-name>-<ms timestamp>`` (Braket's default), within 50 characters."""
    stamp = str(int(time.time() * 1000))
    name = re.sub(r"[^A-Za-z0-9-]+", "-", getattr(fn, "__name__", "").replace("_", "-")).strip("-") or "hybrid-job"
    return f"{name[: 50 - len(stamp) - 1].strip('-') or 'job'}-{stamp}"


def _is_installed(module) -> bool:
    """True for modules of the standard library, site-packages or qhybrid itself (importable in a job)."""
    path = getattr(module, "__file__", None)
    if not path or module.__name__.split(".")[0] == "qhybrid":
        return True
    roots = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return any(os.path.abspath(path).startswith(os.path.abspath(r) + os.sep) for r in roots)


def _modules_by_value(fn, include_modules) -> list:
    if include_modules is None:
        include_modules = []
    elif isinstance(include_modules, (str, type(sys))):
        include_modules = [include_modules]
    modules = []
    for item in include_modules:
        if isinstance(item, str):
            try:
                item = importlib.import_module(item)
            except ImportError as err:
                raise SpecError(f"include_modules: cannot import {item!r} ({err})") from None
        modules.append(item)
    own = sys.modules.get(getattr(fn, "__module__", "") or "")
    if own is not None and own.__name__ != "__main__" and not _is_installed(own):
        modules.append(own)  # a function from the caller's own file: the job cannot import that file
    return modules


def ship(fn, args: tuple, kwargs: dict, *, include_modules=None) -> bytes:
    """Return the cloudpickled call ``functools.partial(fn, *args, **kwargs)``.

    Raises:
        SpecError: when the call cannot be pickled (with a hint).
    """
    import cloudpickle

    modules = _modules_by_value(fn, include_modules)
    registered = []
    try:
        for module in modules:
            try:
                cloudpickle.register_pickle_by_value(module)
                registered.append(module)
            except ValueError:  # already registered
                pass
        return cloudpickle.dumps(functools.partial(fn, *args, **kwargs))
    except Exception as err:  # noqa: BLE001 - anything pickling raises, reported in one line
        raise SpecError(
            f"@hybrid_job could not serialize {getattr(fn, '__name__', fn)!s} with its arguments ({err!r}); "
            "create objects such as devices or open files inside the function instead of passing or "
            "capturing them"
        ) from None
    finally:
        for module in registered:
            cloudpickle.unregister_pickle_by_value(module)


def input_links(input_data) -> list[list[str]]:
    """Return ``[relative path, channel, "file"|"dir"]`` for each relative local input path."""
    if input_data is None:
        return []
    if not isinstance(input_data, dict):
        input_data = {"input": input_data}
    links = []
    for channel, data in input_data.items():
        rel = os.path.normpath(os.fspath(data)) if isinstance(data, (str, os.PathLike)) else None
        if rel and not os.path.isabs(rel) and not rel.startswith("..") and os.path.exists(rel) and rel != ".":
            links.append([os.path.normpath(os.fspath(data)), str(channel), "dir" if os.path.isdir(data) else "file"])
    return links


def requirement_lines(dependencies) -> list[str]:
    """Return the requirement lines of ``dependencies``: a requirements file's path or a list of specifiers.

    Raises:
        SpecError: for a missing file or another type.
    """
    if dependencies is None:
        return []
    if isinstance(dependencies, (str, os.PathLike)):
        path = Path(dependencies).expanduser()
        if not path.is_file():
            raise SpecError(f"dependencies file {str(dependencies)!r} does not exist (give a requirements file or a list)")
        return path.read_text(encoding="utf-8").splitlines()
    if isinstance(dependencies, (list, tuple)) and all(isinstance(d, str) for d in dependencies):
        return list(dependencies)
    raise SpecError(f"dependencies must be a requirements file path or a list of strings, got {dependencies!r}")


def write_source(folder: Path, fn, payload: bytes, *, data_format: str, links, requirements) -> tuple[Path, str]:
    """Write the job's source package into ``folder``; return it and the entry point."""
    name = fn.__name__ if getattr(fn, "__name__", "").isidentifier() else "main"
    package = folder / SOURCE_PACKAGE
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "entry_point.py").write_text(_ENTRY_TEMPLATE.format(name=name), encoding="utf-8")
    (package / SHIPPED).write_bytes(payload)
    (package / CALL).write_text(json.dumps({"data_format": data_format, "links": links}), encoding="utf-8")
    if requirements:
        (package / "requirements.txt").write_text("\n".join(requirements) + "\n", encoding="utf-8")
    return package, f"{SOURCE_PACKAGE}.entry_point:{name}"


def hybrid_job(*, device: str | None, include_modules=None, dependencies=None, data_format="plaintext",
               pickle_result: bool = False, options: SubmitOptions | None = None, _submit=None, **keywords):
    """Decorate a function so that calling it submits a job and returns the Job.

    Args:
        device: the job's device string (``None``: the script reads none).
        include_modules: modules (or names) whose functions are shipped by value too.
        dependencies: a requirements file or a list of requirement specifiers, installed in
            the job's own environment (``qhybrid.jobs.environments``) before it starts.
        data_format: how the return value is saved: ``"plaintext"`` (JSON), ``"pickle"`` /
            ``"pickled_v4"``, or Braket's ``PersistedJobDataFormat``.
        pickle_result: same as ``data_format="pickled_v4"``.
        options, keywords: the :class:`~qhybrid.submit.options.SubmitOptions` of ``Job.create``
            (``job_name`` defaults to ``<function-name>-<timestamp>``; ``hyperparameters`` are
            extra ones, the call's arguments are added to them; relative ``input_data`` paths
            resolve against the caller's folder and appear under the same names in the job's
            working folder).

    Raises:
        SpecError: for a bad data format, an unimportable module, a bad dependencies value or an
            unknown keyword.
    """
    opts = SubmitOptions.of(options, **keywords)
    try:
        fmt = "pickled_v4" if pickle_result else format_name(data_format)
    except ValueError as err:
        raise SpecError(str(err)) from None
    requirements = requirement_lines(dependencies)

    def decorate(fn):
        @functools.wraps(fn)
        def submit(*args, **kwargs):
            hp = {**(opts.hyperparameters or {}), **call_hyperparameters(fn, args, kwargs)}
            payload = ship(fn, args, kwargs, include_modules=include_modules)
            call_opts = replace(opts, hyperparameters=hp, job_name=opts.job_name or default_job_name(fn))
            with tempfile.TemporaryDirectory(prefix="qhybrid-hybrid-job-") as tmp:
                source, entry_point = write_source(
                    Path(tmp), fn, payload, data_format=fmt, links=input_links(opts.input_data),
                    requirements=requirements,
                )
                if _submit is not None:
                    return _submit(device=device, source_module=source, entry_point=entry_point, options=call_opts)
                return Job.create(device, source, entry_point, options=call_opts)

        return submit

    return decorate
