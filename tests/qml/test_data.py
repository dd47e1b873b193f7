"""The Sonar loader."""
from __future__ import annotations

import pytest
import torch

from qhybrid.qml.data import load_sonar, parse_sonar, sample


def test_bundled_sonar():
    X, y = load_sonar()
    assert X.shape == (208, 60) and X.dtype == torch.float32
    assert int((y == 1).sum()) == 111 and int((y == -1).sum()) == 97
    assert float(X.min()) >= 0.0 and float(X.max()) <= 1.0


def test_load_from_path_equals_bundled(tmp_path):
    from importlib import resources

    path = tmp_path / "sonar.all-data"
    path.write_text(resources.files("qhybrid").joinpath("data/sonar.csv").read_text())
    X, y = load_sonar(path)
    X0, y0 = load_sonar()
    assert torch.equal(X, X0) and torch.equal(y, y0)


@pytest.mark.parametrize("text, words", [
    ("0.1,0.2,M", "3 columns"),
    (",".join(["0.1"] * 60) + ",X", "label 'X'"),
    (",".join(["0.1"] * 59 + ["abc"]) + ",M", "line 1"),
    ("", "no rows"),
])
def test_bad_rows(text, words):
    with pytest.raises(ValueError, match=words):
        parse_sonar(text)


def test_sample_is_seeded():
    X, y = load_sonar()
    a, b, c = sample(X, y, 20, seed=1), sample(X, y, 20, seed=1), sample(X, y, 20, seed=2)
    assert torch.equal(a[0], b[0]) and not torch.equal(a[0], c[0])
    assert a[0].shape == (20, 60)
