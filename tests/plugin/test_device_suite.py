"""PennyLane's own device test suite (what ``pl-device-test --device qhybrid.cpu`` runs), in a subprocess.

lightning.qubit with pennylane 0.45.1 gets 389 passed, 45 skipped, 9 xfailed; we
require zero failures and at least as many passes. The analytic run is in the default
suite (CI): every engine change is judged by it; the shots run is `slow` (make test-all).
"""
from __future__ import annotations

import re
import subprocess
import sys

import pytest
from pennylane.devices.tests import get_device_tests


def _run(*extra):
    cmd = [sys.executable, "-m", "pytest", get_device_tests(), "--device=qhybrid.cpu", "--skip-ops",
           "--no-flaky-report", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    tail = proc.stdout[-3000:]
    counts = {k: int(v) for v, k in re.findall(r"(\d+) (passed|failed|errors?|skipped|xfailed)", tail)}
    return proc.returncode, counts, tail


def test_device_suite_analytic():
    rc, counts, tail = _run()
    assert rc == 0 and counts.get("failed", 0) == 0, tail
    assert counts.get("passed", 0) >= 389, tail


@pytest.mark.slow
def test_device_suite_with_shots():
    rc, counts, tail = _run("--shots=10000")
    assert rc == 0 and counts.get("failed", 0) == 0, tail
    assert counts.get("passed", 0) >= 374, tail
