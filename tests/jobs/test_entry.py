"""The job runner: a job module that declares its files closed ends without interpreter teardown,
yet with its atexit handlers and its last output; in-process, the caller lives on."""
from __future__ import annotations

from jobkit import CPU

from qhybrid.jobs import entry

from qhybrid.submit import Job

FAST = """
    import atexit, sys
    from pathlib import Path
    from qhybrid.jobs import hyperparameters, save_job_result
    QHYBRID_EXIT_WITHOUT_TEARDOWN = True
    marker = Path(hyperparameters()["marker"])
    atexit.register(marker.write_text, "atexit ran")


    class Teardown:
        def __del__(self):  # run by the interpreter's teardown, which the declaration skips
            Path(str(marker) + ".teardown").write_text("torn down")


    kept = Teardown()
    save_job_result({"ok": True})
    sys.stdout.write("last words, unflushed")
"""


def test_a_fast_exit_keeps_atexit_handlers_and_output(home, write_script, tmp_path):
    marker = tmp_path / "marker.txt"
    job = Job.create(CPU, write_script("fast.py", FAST), hyperparameters={"marker": str(marker)})
    assert job.result(timeout=60) == {"ok": True}
    assert marker.read_text() == "atexit ran"
    assert "last words, unflushed" in job.logs()
    assert not (tmp_path / "marker.txt.teardown").exists()  # no interpreter teardown


def test_in_process_the_declaration_changes_nothing(home, write_script, tmp_path):
    marker = tmp_path / "marker.txt"
    job = Job.create(CPU, write_script("fast.py", FAST), hyperparameters={"marker": str(marker)}, in_process=True)
    assert job.state() == "COMPLETED" and job.result() == {"ok": True}  # this interpreter still runs


def test_run_returns_a_module_entry_points_globals(tmp_path, monkeypatch):
    (tmp_path / "mod_job.py").write_text("X = 41 + 1\n")
    monkeypatch.setattr("sys.argv", ["x"])
    namespace = entry.run(str(tmp_path), "mod_job")
    assert namespace["X"] == 42 and entry.EXIT_WITHOUT_TEARDOWN not in namespace
