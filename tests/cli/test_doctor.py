"""``qhybrid doctor``."""
from __future__ import annotations

import json


def test_doctor_lists_versions_cuda_threads_and_the_kernel_cache(cli, monkeypatch, tmp_path):
    from qhybrid.kernel_cache import key

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    folder = tmp_path / key()  # this install's key folder, not a superseded one beside it
    folder.mkdir()
    (folder / "numba_kernels.f-1.py311.nbi").write_bytes(b"x" * 10)
    (tmp_path / "kernels-0.0.1-0123456789abcdef").mkdir()
    (tmp_path / "kernels-0.0.1-0123456789abcdef" / "old.nbi").write_bytes(b"x" * 99)
    result = cli("doctor")
    assert result.exit_code == 0
    for words in ("torch", "pennylane", "numba", "ray", "python", "cuda", "kernel cache", "1 files"):
        assert words in result.stdout
    doc = json.loads(cli("doctor", "--json").stdout)
    assert doc["packages"]["qhybrid"] and doc["kernel_cache"] == {"path": str(folder), "files": 1, "bytes": 10}
    assert isinstance(doc["gpus"], list)


def test_doctor_says_which_kernels_qhybrid_gpu_runs_and_why(cli, monkeypatch):
    import qhybrid.devices as devices

    monkeypatch.setattr(devices, "gpu_kernel_path", lambda *a, **k: ("torch", "Tesla V100, capability 7.0"))
    result = cli("doctor")
    assert result.exit_code == 0
    assert "qhybrid.gpu runs torch (Tesla V100, capability 7.0)" in " ".join(result.stdout.split())
    doc = json.loads(cli("doctor", "--json").stdout)
    assert doc["gpu_kernels"] == {"set": "torch", "why": "Tesla V100, capability 7.0"}
