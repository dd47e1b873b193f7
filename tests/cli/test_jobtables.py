"""``qhybrid jobs list/show/compare`` fitted to 80 columns: whole names, whole labels, no word
broken, the result cut with an ellipsis rather than folded."""
from __future__ import annotations

from qhybrid.cli import jobtables

LONG_HP = "hp sagemaker_distributed_dataparallel_enabled"


def _row(name, state, result):
    return {"name": name, "state": state, "device": "qhybrid.cpu", "instance": "ml.m5.2xlarge", "created": None,
            "started": "2026-01-02T03:04:05+00:00", "duration": "2m24s", "result": result, "cost": "$0.001408"}


def test_list_keeps_names_and_states_and_cuts_the_result(capsys):
    long = "ValueError: the file data/train.csv has no column named label_y (columns: a, b, c)"
    jobtables.list_table([_row("qaoa-sweep-layers-3-seed-1967", "FAILED", long), _row("b", "COMPLETED", "cut 12/12")])
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 80 and len(lines) == 4  # one line per job
    assert lines[0].split()[:3] == ["NAME", "STATE", "RESULT"] and "COST" in lines[0]
    assert "qaoa-sweep-layers-3-seed-1967" in lines[2] and "FAILED" in lines[2] and "…" in lines[2]
    assert "ValueError: the file data/" in lines[2] and "$0.001408" in lines[2]


def test_compare_in_blocks_with_whole_names_and_labels(capsys):
    names = ["qaoa-sweep-layers-1-seed-1967", "qaoa-sweep-layers-2-seed-1967", "qaoa-sweep-layers-3-seed-1967"]
    rows = [["state", "COMPLETED", "COMPLETED", "FAILED"], [LONG_HP, "true", "false", "true"],
            ["summary", "cut 12 of 14 edges — optimum 12 (found)", "cut 11 of 14 edges — optimum 12", None]]
    jobtables.compare(["", *names], rows)
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert all(sum(name in line for line in lines) == 1 for name in names)  # each name whole, once
    assert sum(LONG_HP in line for line in lines) == 3  # the label whole, in each block (one job each at 80)
    assert "optimum 12" in out and "(found)" in out
