"""numba's library loaded without its scipy BLAS probe: scipy.linalg stays unloaded, and kernels
(np.dot included) still compile and agree; scipy is importable afterwards."""
from __future__ import annotations

import json
import subprocess
import sys

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
