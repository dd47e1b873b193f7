"""qhybrid: hybrid quantum-classical jobs on fast embedded simulators.

    from qhybrid import Job, InstanceConfig, hybrid_job
"""
from __future__ import annotations

__version__ = "0.1.0"

_LAZY = {
    "Job": "qhybrid.submit",
    "InstanceConfig": "qhybrid.jobs.spec",
    "hybrid_job": "qhybrid.submit",
    "SubmitOptions": "qhybrid.submit",
}

__all__ = ["Job", "InstanceConfig", "SubmitOptions", "hybrid_job", "__version__"]


def __getattr__(name):  # lazy so `import qhybrid` stays cheap for job scripts
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'qhybrid' has no attribute {name!r}")
