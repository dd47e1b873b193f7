"""Metric lines and Braket-shaped metric columns."""
from __future__ import annotations

from qhybrid.jobs import metrics


def test_parse_line():
    row = metrics.parse_line("INFO Metrics - timestamp=10.5; Cost=-3.2; iteration_number=4;")
    assert row == {"timestamp": 10.5, "Cost": -3.2, "iteration_number": 4.0}
    row = metrics.parse_line("Metrics - a=x; b=2;")  # non-numbers dropped, timestamp added, as Braket
    assert set(row) == {"b", "timestamp"} and row["b"] == 2.0
    assert metrics.parse_line("no metrics here") is None
    assert metrics.parse_line("Metrics - x=1;", rank=2)["rank"] == 2


def test_tag_rank():
    assert metrics.tag_rank("Metrics - a=1;", 1) == "Metrics - a=1; rank=1;"
    assert metrics.tag_rank("plain", 1) == "plain"
    assert metrics.tag_rank("Metrics - a=1;", 0) == "Metrics - a=1;"


def test_columns_pivot_and_statistic():
    rows = [
        {"timestamp": 1.0, "loss": 3.0, "iteration_number": 0},
        {"timestamp": 1.0, "loss": 5.0, "iteration_number": 0},
        {"timestamp": 2.0, "acc": 0.5, "iteration_number": 1},
        {"timestamp": 2.0, "loss": 9.0, "rank": 1},
    ]
    assert metrics.columns(rows) == {"timestamp": [1.0, 2.0], "loss": [5.0, None],
                                     "iteration_number": [0, 1], "acc": [None, 0.5]}
    assert metrics.columns(rows, statistic="min")["loss"] == [3.0, None]
    assert metrics.columns(rows, rank=1) == {"timestamp": [2.0], "loss": [9.0]}
    assert metrics.columns(rows, metric_type="iteration_number")["iteration_number"] == [0, 1]
