"""The Sonar data set (mines vs. rocks): 208 rows of 60 features and a label.

Bundled as ``qhybrid/data/sonar.csv`` (attribution in ``data/README.md``).
"""
from __future__ import annotations

import csv
import io
from importlib import resources
from pathlib import Path

import torch

N_FEATURES = 60
LABELS = {"M": 1.0, "R": -1.0}


def parse_sonar(text: str, *, source: str = "sonar data") -> tuple[torch.Tensor, torch.Tensor]:
    """Parse CSV text of rows ``f1, ..., f60, M|R``.

    Returns:
        ``(X, y)``: float32 ``(N, 60)`` features, float32 ``(N,)`` labels +1 (mine) / -1 (rock).

    Raises:
        ValueError: a row of the wrong width, a bad number or a label other than M/R.
    """
    features, labels = [], []
    for line, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != N_FEATURES + 1:
            raise ValueError(f"{source}, line {line}: {len(row)} columns; expected "
                             f"{N_FEATURES} features and a label M or R")
        label = row[-1].strip()
        if label not in LABELS:
            raise ValueError(f"{source}, line {line}: label {label!r}; expected M (mine) or R (rock)")
        try:
            features.append([float(cell) for cell in row[:-1]])
        except ValueError as err:
            raise ValueError(f"{source}, line {line}: {err}") from None
        labels.append(LABELS[label])
    if not labels:
        raise ValueError(f"{source}: no rows")
    return torch.tensor(features, dtype=torch.float32), torch.tensor(labels, dtype=torch.float32)


def load_sonar(path=None) -> tuple[torch.Tensor, torch.Tensor]:
    """Load Sonar from ``path``, or the bundled copy when ``path`` is None.

    Example:
        >>> X, y = load_sonar()
        >>> X.shape, int((y > 0).sum())
        (torch.Size([208, 60]), 111)
    """
    if path is None:
        text = resources.files("qhybrid").joinpath("data/sonar.csv").read_text()
        return parse_sonar(text, source="bundled sonar.csv")
    path = Path(path)
    return parse_sonar(path.read_text(), source=str(path))


def sample(X: torch.Tensor, y: torch.Tensor, ndata: int, *, seed: int):
    """``ndata`` rows drawn without replacement by a permutation seeded with ``seed``."""
    gen = torch.Generator().manual_seed(seed)
    idx = torch.randperm(X.shape[0], generator=gen)[:ndata]
    return X[idx], y[idx]
