"""``qhybrid cluster``: status without a cluster (starting one is covered by the Ray tests)."""
from __future__ import annotations

import json


def test_status_without_a_cluster_exits_1(cli):
    result = cli("cluster", "status")
    assert result.exit_code == 1 and result.stdout.strip() == "no local Ray cluster running"
    result = cli("cluster", "status", "--json")
    assert result.exit_code == 1 and json.loads(result.stdout) == {"running": False}


def test_stop_without_a_cluster(cli):
    result = cli("cluster", "stop", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout) == {"stopped": False}


def test_cluster_commands_use_the_ray_backends_cluster_module_without_importing_ray():
    """One home (backends/ray/cluster.py, the old backends/ray_cluster.py shim is gone); Ray loads only
    when a cluster is reached, so ``cluster status`` without one stays light (a real interpreter)."""
    import subprocess
    import sys

    from qhybrid.cli import cluster

    assert cluster._ray_cluster().__name__ == "qhybrid.jobs.backends.ray.cluster"
    code = ("import sys; from qhybrid.cli import main; rc = main(['cluster', 'status']); "
            "print(rc, 'ray' in sys.modules, 'qhybrid.jobs.backends.ray_cluster' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "1 False False", out.stdout + out.stderr
