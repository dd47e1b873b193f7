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


def test_metric_names_are_any_printable_word():
    row = metrics.parse_line("Metrics - timestamp=1; λoss=0.5; val/acc=0.9; f1@0.5=0.7; 损失=2; train loss=3;")
    assert row == {"timestamp": 1.0, "λoss": 0.5, "val/acc": 0.9, "f1@0.5": 0.7, "损失": 2.0, "loss": 3.0}
    assert set(metrics.parse_line("Metrics - a = 1 ; b=2")) == {"a", "timestamp"}  # "b=2" is not closed
    assert metrics.parse_line("Metrics - \x00=1;") is None  # not printable


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


def test_a_job_keeps_non_ascii_metric_names_whole(write_script):
    from jobkit import CPU

    from qhybrid import Job

    script = write_script("greek.py", "from qhybrid.jobs import log_metric\n"
                                      "for i in range(3):\n    log_metric('λoss', 1.0 / (i + 1), iteration_number=i)\n")
    job = Job.create(CPU, script).wait(timeout=60)
    assert job.state() == "COMPLETED"
    assert job.metrics(metric_type="iteration_number")["λoss"] == [1.0, 0.5, 1 / 3]
