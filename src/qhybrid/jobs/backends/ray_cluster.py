"""Former home of ``backends/ray/cluster.py`` (kept so ``python -m qhybrid.jobs.backends.ray_cluster``
and old imports keep working)."""
from __future__ import annotations

import sys

from qhybrid.jobs.backends.ray.cluster import *  # noqa: F401,F403
from qhybrid.jobs.backends.ray.cluster import main

if __name__ == "__main__":
    sys.exit(main())
