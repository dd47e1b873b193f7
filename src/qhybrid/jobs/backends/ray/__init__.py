"""Ray backend: each instance a placement-group bundle, each rank a ``RankRunner`` actor in it.

- ``backend``: ``Backend`` (the supervisor's side: placement, polling, outputs home) and
  ``check_submission`` (refuse what the cluster can never fit, before anything is written);
- ``cluster``: the local cluster this machine starts on demand, addresses, connecting
  (``python -m qhybrid.jobs.backends.ray.cluster start|status|stop``);
- ``placement``: bundles per instance, ranks per bundle;
- ``transfer``: the job folder's paths and environment mapped to a worker's workspace;
- ``worker``: ``RankRunner``, imported inside Ray workers (standard library only).

Attributes load lazily, so a Ray worker importing ``worker`` does not import the runtime.
See docs/ray.md.
"""
from __future__ import annotations

_LAZY = {name: "backend" for name in ("Backend", "check_submission", "placement_for", "died_summary", "DIED_CODE")}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
