"""Where compiled kernels are cached (standard library only, so the CLI can say so without loading the engine).

``NUMBA_CACHE_DIR`` when it is set, else ``$XDG_CACHE_HOME/qhybrid`` (``~/.cache/qhybrid``): once per
install and machine, never in the package or a source tree. ``sim.jit`` points numba there.
"""
from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """Where compiled kernels are cached: ``NUMBA_CACHE_DIR``, else ``~/.cache/qhybrid``."""
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "qhybrid"
