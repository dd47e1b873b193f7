"""Backends place a job's processes; the supervisor owns everything else.

A backend is found by name (``backends/<name>.py`` or the package ``backends/<name>/``
exporting ``Backend``) and subclasses ``base.Backend``: ``launch``, ``poll``, ``kill``
are required; ``check`` (pre-flight at submission), ``prepare``, ``groups``, ``drain``,
``failure_reason`` and ``finish`` have defaults (see ``base``).

The job folder's paths are in each ProcessSpec's ``env`` (``AMZN_BRAKET_*``)
and ``cwd`` (the source snapshot); a remote backend maps them to its own.

``local`` runs subprocesses on this machine, ``inprocess`` runs the script in
this interpreter (tests, debugging); ``ray`` places them on a Ray cluster (docs/ray.md).
"""
from __future__ import annotations

import importlib

from qhybrid.errors import SpecError
from qhybrid.jobs.backends.base import Backend, ProcessSpec  # noqa: F401  (re-exported)


def get_backend(name: str):
    """Return a new backend instance by name.

    Raises:
        SpecError: for a backend that is not available here.
    """
    try:
        module = importlib.import_module(f"qhybrid.jobs.backends.{name}")
    except ModuleNotFoundError as err:
        if err.name and err.name.startswith("qhybrid.jobs.backends"):
            raise SpecError(f"backend {name!r} is not available; use 'local'") from None
        raise SpecError(f"backend {name!r} needs {err.name!r}, which is not installed") from None
    return module.Backend()
