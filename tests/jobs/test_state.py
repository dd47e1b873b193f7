"""JobState and the one transition function."""
from __future__ import annotations

import json
import time

import pytest

from qhybrid.errors import SpecError
from qhybrid.jobs import contract, state, store
from qhybrid.jobs.spec import JobSpec
from qhybrid.jobs.state import JobState


def _job(name="s1"):
    spec = JobSpec(name=name, device="local:qhybrid/qhybrid.cpu", source="/x.py", entry_point="x", created=time.time())
    return store.create(spec, lambda tmp: None)


def test_state_is_a_str_enum():
    assert JobState.COMPLETED == "COMPLETED" and f"{JobState.FAILED}" == "FAILED" and str(JobState.RUNNING) == "RUNNING"
    assert json.dumps({"s": JobState.QUEUED}) == '{"s": "QUEUED"}'
    assert state.parse("running") is JobState.RUNNING
    with pytest.raises(SpecError, match="state 'DONE' is not one of"):
        state.parse("DONE")


def test_transitions_follow_the_lifecycle_and_are_recorded_in_the_folder():
    folder = _job()
    assert store.get("s1")["state"] is JobState.QUEUED
    assert not state.transition("s1", JobState.COMPLETED)  # never straight from QUEUED to COMPLETED
    assert state.transition("s1", "RUNNING", started=1.0)
    assert json.loads((folder / contract.STATE_FILE).read_text())["state"] == "RUNNING"
    assert state.transition("s1", JobState.COMPLETED, billed_seconds=3)
    assert not state.transition("s1", JobState.FAILED)  # terminal states stay
    rec = json.loads((folder / contract.STATE_FILE).read_text())
    assert rec["state"] == "COMPLETED" and rec["billed_seconds"] == 3 and rec["ended"] >= 1.0


def test_states_change_only_through_transition():
    _job("s2")
    with pytest.raises(ValueError, match="state.transition"):
        store.update("s2", state="COMPLETED")
