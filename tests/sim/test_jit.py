"""Compiled kernels are cached per user (a key folder under NUMBA_CACHE_DIR or ~/.cache/qhybrid), never in the source tree."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import qhybrid
from qhybrid.kernel_cache import key

SRC = Path(qhybrid.__file__).resolve().parent.parent
COMPILE = ("import numpy as np, numba; from qhybrid.sim import bitops; bitops.sign_table(8, 3); "
           "print(numba.config.CACHE_DIR)")


def _run(env_updates: dict, unset=()) -> str:
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update(env_updates)
    env["PYTHONPATH"] = str(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", COMPILE], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def _index_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*.nbi")]


def test_default_cache_is_under_the_user_cache_home(tmp_path):
    before = set(_index_files(SRC))
    where = _run({"XDG_CACHE_HOME": str(tmp_path)}, unset=("NUMBA_CACHE_DIR",))
    assert Path(where) == tmp_path / "qhybrid" / key()
    assert any("sign_table" in p.name for p in _index_files(Path(where)))
    assert set(_index_files(SRC)) == before  # nothing written beside the sources


def test_numba_cache_dir_wins(tmp_path):
    where = _run({"NUMBA_CACHE_DIR": str(tmp_path / "nb"), "XDG_CACHE_HOME": str(tmp_path / "xdg")})
    assert Path(where) == tmp_path / "nb" / key()  # keyed inside the user's folder
    assert _index_files(Path(where)) and not (tmp_path / "xdg").exists()


def test_registry_fills_itself():
    from qhybrid.sim import registry

    names = registry.names()
    assert {"apply_1q", "pauli_sum_accumulate", "adjoint_layer_planar", "grad_1q"} <= set(names)
    with pytest.raises(KeyError):
        registry.kernel("no_such_kernel", 1)
    k = registry.kernel("vdot_real", 1)
    assert k is registry.kernel("vdot_real", 2) and k is not registry.kernel("vdot_real", registry.PARALLEL_MIN)


def test_threads_sets_and_restores_both_pools():
    import numba
    import torch

    from qhybrid.sim.jit import threads

    before = (torch.get_num_threads(), numba.get_num_threads())
    with threads(1):
        assert (torch.get_num_threads(), numba.get_num_threads()) == (1, 1)
    with threads(1, torch_too=False):
        assert (torch.get_num_threads(), numba.get_num_threads()) == (before[0], 1)
    with threads(None):
        assert (torch.get_num_threads(), numba.get_num_threads()) == before
    assert (torch.get_num_threads(), numba.get_num_threads()) == before
