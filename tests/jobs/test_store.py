"""The SQLite index and job folders."""
from __future__ import annotations

import threading
import time

import pytest

from qhybrid.errors import JobNotFoundError, SpecError
from qhybrid.jobs import store
from qhybrid.jobs.spec import JobSpec


def _spec(name: str) -> JobSpec:
    return JobSpec(name=name, device="local:qhybrid/qhybrid.cpu", source="/x.py", entry_point="x",
                   created=time.time())


def test_create_get_transition_delete():
    folder = store.create(_spec("a"), lambda tmp: (tmp / "source" / "x.py").write_text("pass"))
    assert (folder / "spec.json").exists() and (folder / "source" / "x.py").exists()
    assert store.get("a")["state"] == "QUEUED"
    assert store.transition("a", "RUNNING", from_states=("QUEUED",), started=1.0)
    assert not store.transition("a", "RUNNING", from_states=("QUEUED",))
    assert store.transition("a", "COMPLETED")
    row = store.get("a")
    assert row["state"] == "COMPLETED" and row["ended"] >= row["started"]
    assert not store.transition("a", "FAILED")  # terminal states stay
    store.delete("a")
    with pytest.raises(JobNotFoundError):
        store.get("a")
    assert not folder.exists()


def test_failed_populate_leaves_nothing(_isolated_home):
    def boom(tmp):
        raise OSError("disk full")

    with pytest.raises(OSError):
        store.create(_spec("b"), boom)
    assert store.rows() == [] and list((_isolated_home / "jobs").iterdir()) == []


def test_concurrent_inserts_of_one_name_admit_one():
    outcomes = []

    def attempt():
        try:
            store.insert(_spec("same"))
            outcomes.append("ok")
        except SpecError:
            outcomes.append("taken")

    threads = [threading.Thread(target=attempt) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["ok"] + ["taken"] * 7


def test_rows_filters_by_state():
    store.insert(_spec("q"))
    assert [r["name"] for r in store.rows("QUEUED")] == ["q"]
    with pytest.raises(SpecError, match="state 'DONE'"):
        store.rows("DONE")
