"""``qhybrid devices`` and ``qhybrid instances``."""
from __future__ import annotations

import json


def test_devices_table_and_json(cli):
    result = cli("devices")
    assert result.exit_code == 0
    assert "local:qhybrid/qhybrid.cpu" in result.stdout and "local:pennylane/lightning.qubit" in result.stdout
    assert result.stderr.startswith("CUDA: ")
    doc = json.loads(cli("devices", "--json").stdout)
    assert "qhybrid.cpu" in doc["devices"]["qhybrid"] and doc["cuda"] in (True, False)


def test_instances_table_and_json(cli):
    result = cli("instances")
    assert result.exit_code == 0
    assert "ml.p3.2xlarge" in result.stdout and "0.06375" in result.stdout and "unknown" in result.stdout
    table = result.stdout.split("\n[1] ")[0]  # the numbered price sources follow the table, as prose
    assert max(len(line) for line in table.splitlines()) <= 80
    assert "[1] " in result.stdout and "SRC" in table
    rows = json.loads(cli("instances", "--json").stdout)
    assert any(r["type"] == "ml.m5.2xlarge" for r in rows)


def test_devices_say_which_kernels_qhybrid_gpu_runs_and_why(cli, monkeypatch):
    import qhybrid.devices as devices

    monkeypatch.setattr(devices, "gpu_kernel_path", lambda *a, **k: ("triton", "NVIDIA H200, cc 9.0"))
    result = cli("devices")
    assert result.exit_code == 0
    gpu_row = " ".join(result.stdout.split("local:qhybrid/qhybrid.gpu", 1)[1].split())
    assert "needs CUDA" in gpu_row and "triton" in gpu_row and "H200" in gpu_row
    doc = json.loads(cli("devices", "--json").stdout)
    assert doc["gpu_kernels"] == {"set": "triton", "why": "NVIDIA H200, cc 9.0"}
