"""Metric lines and Braket-shaped metric columns."""
from __future__ import annotations

import json
import time

import pytest

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


# Metric lines as scripts print them: log_metric's own, then every way a line can leave its shape.
LOGGED = [
    "Metrics - timestamp=1796192016.906411; loss=0.5; iteration_number=4;",
    "Metrics - timestamp=1796192016.9; λoss=5e-06;",
    "INFO Metrics - timestamp=1; val/acc=-0; iteration_number=0;",
    "Metrics - timestamp=1.50; f1@0.5=1E5; iteration_number=12345678901234567;",
    "Metrics - timestamp=2; big=1e400; iteration_number=3;",
]
ODD = [
    "Metrics - timestamp=3; loss=nan; iteration_number=1;",
    "Metrics - timestamp=3; loss=+1; iteration_number=1.;",
    "Metrics - timestamp=3; timestamp=4;",
    "Metrics - timestamp=3; iteration_number=4;",
    "Metrics - timestamp=3; \x00=1;",
    "Metrics - x=y Metrics - timestamp=1; a=2;",
    "Metrics - timestamp=3; loss=1; ",
    "Metrics - loss=1;",
    "Metrics - nothing here",
    "plain output, λ, 1=2;",
    "",
]


def _rows(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


@pytest.mark.parametrize("odd", [None, *ODD])
def test_a_block_of_lines_makes_the_rows_of_its_lines_one_by_one(odd):
    block = LOGGED * 3 + ([odd] if odd is not None else []) + LOGGED
    before = time.time()
    got = _rows(metrics.jsonl("\n".join(block), rank=2))
    expect = [json.loads(metrics.to_json(row)) for row in (metrics.parse_line(line, rank=2, now=-1.0) for line in block)
              if row is not None]
    for mine, theirs in zip(got, expect):
        if theirs["timestamp"] == -1.0:  # a line without a timestamp: the time it was read
            assert before <= mine["timestamp"] <= time.time()
            theirs["timestamp"] = mine["timestamp"]
    assert got == expect


def test_log_metric_lines_are_written_as_json_writes_their_rows():
    block = "\n".join(LOGGED[:3] + ["between", LOGGED[0]])
    expect = "".join(metrics.to_json(metrics.parse_line(line)) + "\n" for line in block.split("\n")
                     if metrics.MARKER in line)
    assert metrics.jsonl(block) == expect
    assert metrics.jsonl("no metric here\nnor here") == ""


def test_rows_without_a_timestamp_get_the_time_they_were_read():
    before = time.time()
    (row,) = _rows(metrics.jsonl("Metrics - loss=1;"))
    assert before <= row["timestamp"] <= time.time() and row["loss"] == 1.0
