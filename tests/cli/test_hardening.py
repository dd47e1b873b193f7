"""The job runtime's hardening as a CLI user meets it: pickled results, damaged jobs, bad input."""
from __future__ import annotations

import json
import textwrap

import pytest

from qhybrid.cli import main

PICKLER = """
    from qhybrid.jobs import save_job_result
    save_job_result({"x": {1, 2}}, data_format="pickled_v4")
"""


def test_pickled_results_need_allow_pickle(tmp_path, capsys):
    job = tmp_path / "pickler.py"
    job.write_text(textwrap.dedent(PICKLER))
    assert main(["run", str(job), "--name", "pk", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "qhybrid: error: the result of job 'pk' is pickled" in err and "--allow-pickle" in err
    assert main(["jobs", "result", "pk"]) == 1
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert main(["jobs", "result", "pk", "--allow-pickle"]) == 0
    assert "{1, 2}" in capsys.readouterr().out


def test_truncated_result_is_one_line(script, capsys, _isolated_home):
    assert main(["run", str(script), "--name", "tr", "--quiet"]) == 0
    (_isolated_home / "jobs" / "tr" / "results" / "results.json").write_text('{"dataDictionary": {"x"')
    capsys.readouterr()
    assert main(["jobs", "result", "tr"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "results.json is damaged" in err[0]


def test_jobs_repair_and_damaged_listing(script, capsys, _isolated_home):
    assert main(["run", str(script), "--name", "r1", "--quiet"]) == 0
    (_isolated_home / "jobs" / "r1" / "spec.json").write_text("garbage")
    capsys.readouterr()
    assert main(["jobs", "list"]) == 0
    out, err = capsys.readouterr()
    assert "DAMAGED" in out and "spec.json is unreadable" in err
    (_isolated_home / "index.db").write_bytes(b"garbage" * 200)
    for suffix in ("-wal", "-shm"):
        (_isolated_home / f"index.db{suffix}").unlink(missing_ok=True)
    from qhybrid.jobs import store

    store._READY.clear()
    assert main(["jobs", "repair", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["index_rebuilt"] is True
    assert main(["jobs", "list", "--json"]) == 0
    assert [r["name"] for r in json.loads(capsys.readouterr().out)] == ["r1"]


@pytest.mark.parametrize("extra", [
    ["--max-runtime", "nan"], ["--max-cost", "inf", "--instance", "ml.m5.2xlarge"], ["--max-runtime", "0"],
    ["--max-runtime", "-5"], ["--processes-per-instance", "0"], ["--input", "data=/dev/zero"],
    ["--name", "bad\n"], ["--device", "local:qhybrid/qhybrid.gpu", "--instance", "ml.p3.2xlarge"],
    ["--instance-count", "0"], ["--entry-point", "nope"], ["--input", "bad name=."],
])
def test_bad_input_is_one_line_exit_1_and_nothing_written(script, capsys, _isolated_home, extra, monkeypatch):
    from qhybrid import devices

    monkeypatch.setattr(devices, "local_gpus", lambda: 0)
    assert main(["run", str(script), *extra]) == 1
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and err.startswith("qhybrid: error: ")
    jobs = _isolated_home / "jobs"
    assert not (jobs.exists() and any(jobs.iterdir())) and not (_isolated_home / "index.db").exists()


def test_relative_home_is_one_line(script, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("QHYBRID_HOME", "relative-home")
    assert main(["run", str(script)]) == 1 and main(["jobs", "list"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "is a relative path" in err[0] and not (tmp_path / "relative-home").exists()
