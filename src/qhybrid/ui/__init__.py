"""``qhybrid ui``: a local web dashboard over the job store (jobs table, a job's live page, compare),
and the small JSON API behind it. See ``qhybrid.ui.server`` and docs/ui.md."""
from __future__ import annotations

from qhybrid.ui.server import Dashboard, serve

__all__ = ["Dashboard", "serve"]
