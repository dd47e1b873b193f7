"""What every program prints, one line a number (read by ``benchmarks/programs.py``).

``exact LABEL v1 v2 ...``: quantities both devices compute exactly (compared to 1e-8);
``sampled LABEL value sigma``: a finite-shot estimate and its standard error (compared within
shot noise); ``text LABEL ...``: text compared as it is.
"""
import sys

import numpy as np


def device_name() -> str:
    """The device to run on: the program's first argument (default ``qhybrid.cpu``)."""
    return sys.argv[1] if len(sys.argv) > 1 else "qhybrid.cpu"


def exact(label: str, *values) -> None:
    flat = np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in values])
    print("exact", label, " ".join(f"{x:.15e}" for x in flat), flush=True)


def sampled(label: str, value: float, sigma: float) -> None:
    print("sampled", label, f"{float(value):.15e}", f"{float(sigma):.15e}", flush=True)


def text(label: str, value: str) -> None:
    print("text", label, value.replace("\n", "\\n"), flush=True)
