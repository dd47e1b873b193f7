"""numba's library loaded without its scipy BLAS probe: scipy.linalg stays unloaded, and kernels
(np.dot included) still compile and agree; scipy is importable afterwards. The butterfly entry
compiled ahead by a child process: loaded from the cache, or compiled here when the child fails."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from qhybrid.workloads import numba_load

CHECK = """
import json, sys
import numpy as np
from qhybrid.workloads import numba_load
first = numba_load.skip_blas_probe()
again = numba_load.skip_blas_probe()
linalg_loaded = "scipy.linalg" in sys.modules
from numba import njit

@njit(cache=False)
def dot_and_sum(a, b):
    return np.dot(a, b) + np.sum(a)

a = np.arange(5.0)
value = float(dot_and_sum(a, a))
import scipy.linalg
print(json.dumps({"first": first, "again": again, "linalg_loaded": linalg_loaded,
                  "value": value, "expected": float(a @ a + a.sum()), "scipy": scipy.linalg.__name__}))
"""


def test_numba_loads_without_scipy_linalg_and_still_computes():
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.splitlines()[-1])
    assert got["first"] is True and got["again"] is False and got["linalg_loaded"] is False
    assert got["value"] == got["expected"] and got["scipy"] == "scipy.linalg"


AHEAD = """
import json, sys
import numpy as np
from qhybrid.workloads import numba_load
started = numba_load.compile_ahead("complex128")
children = [c.pid for c in numba_load._children]
if sys.argv[1] == "kill":  # a child that fails: this process compiles the entry itself
    numba_load._children[0].kill()
from qhybrid.sim import walsh
address = walsh.butterflies(np.float64)  # waits for the child, then loads what it left in the cache
hits = walsh._ENTRIES["float64"]._cache_hits
x = np.random.default_rng(5).standard_normal(2**12)
got = x.copy()
walsh.wht_block(got, 0, got.size)
want = x.copy()
h = 2
while h < want.size:
    v = want.reshape(-1, 2, h)
    a, b = v[:, 0].copy(), v[:, 1].copy()
    v[:, 0], v[:, 1] = a + b, a - b
    h *= 2
numba_load.end_children()
print(json.dumps({"started": started, "children": children, "hits": hits, "again": numba_load.compile_ahead("complex128"),
                  "error": float(np.abs(got - want).max()), "left": numba_load._children}))
"""


def _ahead(tmp_path, mode):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")
    out = subprocess.run([sys.executable, "-c", AHEAD, mode], capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.splitlines()[-1])


@pytest.mark.slow
def test_the_entry_compiled_ahead_by_a_child_is_loaded_from_the_cache(tmp_path):
    got = _ahead(tmp_path, "wait")
    assert got["started"] is True and len(got["children"]) == 1 and got["left"] == []
    assert got["hits"] == 1  # loaded, not compiled here
    assert got["error"] < 1e-9 and got["again"] is False  # in the cache now: no second child


@pytest.mark.slow
def test_a_failing_child_leaves_the_entry_to_this_process(tmp_path):
    got = _ahead(tmp_path, "kill")
    assert got["started"] is True and got["hits"] == 0  # compiled here
    assert got["error"] < 1e-9 and got["left"] == []


ORPHAN = """
import os, sys
from qhybrid.jobs import procs
from qhybrid.workloads import numba_load
assert numba_load.compile_ahead("complex64")
child = numba_load._children[0].pid
print(child, procs.start_time(child), flush=True)
os._exit(0)  # without end_children: the child must not outlive this process
"""


def _orphans(tmp_path, script: str):
    """Run ``script`` (it prints ``pid start_time`` per child, then exits without reaping them);
    wait up to 5 s for those children to die; return ``(still alive, all)``."""
    import time

    from qhybrid.jobs import procs

    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")
    # (stderr not a pipe: the child inherits it, and a pipe would be read until the child ends too)
    out = subprocess.run([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True, timeout=120, env=env)
    assert out.returncode == 0
    words = out.stdout.split()
    children = list(zip(words[::2], words[1::2]))
    assert children
    deadline = time.monotonic() + 5  # (the child's own compilation takes longer than this)
    while any(procs.alive(int(p), s) for p, s in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [(p, s) for p, s in children if procs.alive(int(p), s)], children


def test_the_child_dies_with_its_parent(tmp_path):
    alive, children = _orphans(tmp_path, ORPHAN)
    assert len(children) == 1 and not alive


QML_AHEAD = """
import json, sys
import torch
from qhybrid.workloads import numba_load
started = numba_load.compile_ahead("complex128", workload="qml")
children = [c.pid for c in numba_load._children]
if sys.argv[1] == "kill":  # children that fail: this process compiles the kernels itself
    for c in numba_load._children:
        c.kill()
from qhybrid.qml import QuantumLayer
from qhybrid.sim import batched, registry
layer = QuantumLayer(4, generator=torch.Generator().manual_seed(2), kernel="numba")
twin = QuantumLayer(4, generator=torch.Generator().manual_seed(2), kernel="torch")
x = torch.rand(5, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
out, ref = layer(x), twin(x)
out.sum().backward()
ref.sum().backward()
hits = {name: sum(registry.kernel(name, 0)._cache_hits.values()) for name in batched.KERNELS}
numba_load.end_children()
print(json.dumps({"started": started, "children": children, "hits": hits, "left": numba_load._children,
                  "again": numba_load.compile_ahead("complex128", workload="qml"),
                  "error": float((out - ref).abs().max()),
                  "grad_error": float((layer.w_layer1.grad - twin.w_layer1.grad).abs().max())}))
"""


def _qml_ahead(tmp_path, mode):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")
    out = subprocess.run([sys.executable, "-c", QML_AHEAD, mode], capture_output=True, text=True, timeout=600,
                         env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.splitlines()[-1])


@pytest.mark.slow
def test_the_qml_kernels_compiled_ahead_by_children_are_loaded_from_the_cache(tmp_path):
    got = _qml_ahead(tmp_path, "wait")
    assert got["started"] is True and len(got["children"]) == len(numba_load.QML_GROUPS) and got["left"] == []
    assert got["hits"] == {name: 1 for name in numba_load.QML_KERNELS}  # each loaded, none compiled here
    assert got["error"] < 1e-10 and got["grad_error"] < 1e-10
    assert got["again"] is False  # all in the cache now: no more children


@pytest.mark.slow
def test_failing_qml_children_leave_the_kernels_to_this_process(tmp_path):
    got = _qml_ahead(tmp_path, "kill")
    assert got["started"] is True and got["left"] == []
    assert got["error"] < 1e-10 and got["grad_error"] < 1e-10


def test_the_qml_groups_cover_the_layer_kernels_once():
    from qhybrid.sim import batched

    assert numba_load.QML_KERNELS == batched.KERNELS
    assert sorted(k for group in numba_load.QML_GROUPS for k in group) == sorted(batched.KERNELS)
    with pytest.raises(ValueError, match="valid are qaoa, qml"):
        numba_load.compile_ahead("complex128", workload="vqe")


QML_ORPHAN = """
import os
from qhybrid.jobs import procs
from qhybrid.workloads import numba_load
assert numba_load.compile_ahead("complex128", workload="qml")
print(" ".join(f"{c.pid} {procs.start_time(c.pid)}" for c in numba_load._children), flush=True)
os._exit(0)  # without end_children: no child may outlive this process
"""


def test_the_qml_children_die_with_their_parent(tmp_path):
    alive, children = _orphans(tmp_path, QML_ORPHAN)
    assert len(children) == len(numba_load.QML_GROUPS) and not alive
