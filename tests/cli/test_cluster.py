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
