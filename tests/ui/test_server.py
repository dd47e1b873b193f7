"""``qhybrid ui``'s server and API over HTTP: the token and Host checks, the states, live updates
as a job runs, cancel, log paging, compare, and the command that prints the URL."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request

import pytest
from jobkit import wait_for

from qhybrid.submit import Job

CPU = "local:qhybrid/qhybrid.cpu"


def _job(tmp_path, name, body, **kwargs):
    script = tmp_path / f"{name}.py"
    script.write_text(body)
    return Job.create(CPU, str(script), job_name=name, **kwargs)


@pytest.mark.parametrize("path", ["/", "/job?name=x", "/compare?jobs=x", "/static/app.js", "/static/style.css",
                                  "/api/jobs", "/api/states", "/api/jobs/x/cancel"])
def test_every_route_needs_the_token(request_, path):
    method = "POST" if path.endswith("cancel") else "GET"
    assert request_(method, path, token=None)[0] == 401
    assert request_(method, path, token="not-the-token")[0] == 403
    assert request_(method, path, token="")[0] == 401


def test_token_by_query_or_header_host_checked_and_headers(board, request_):
    status, headers, body = request_("GET", "/")
    assert status == 200 and b"qhybrid jobs" in body and board.token.encode() in body
    assert "script-src 'self'" in headers["Content-Security-Policy"] and headers["Referrer-Policy"] == "no-referrer"
    assert request_("GET", "/api/states", header_token=True)[0] == 200
    assert request_("GET", "/api/states", host=f"localhost:{board.port}")[0] == 200
    for host in ("evil.example", f"evil.example:{board.port}", "127.0.0.1:1", ""):
        assert request_("GET", "/api/states", host=host)[0] == 403
    assert board.url.startswith(f"http://127.0.0.1:{board.port}/?token=")


def test_states_failed_reason_filters_and_paging(tmp_path, api, request_):
    done = _job(tmp_path, "done", "from qhybrid.jobs import log_metric\nlog_metric('loss', 0.5, iteration_number=0)\n",
                in_process=True)
    _job(tmp_path, "broken", "raise ValueError('no column y in <data.csv>')\n", in_process=True)
    queued = _job(tmp_path, "waiter", "import time\ntime.sleep(60)\n")
    queued.cancel()
    page = api("/api/jobs")
    assert [r["name"] for r in page["rows"]] == ["waiter", "broken", "done"] and page["total"] == 3
    rows = {r["name"]: r for r in page["rows"]}
    assert rows["done"]["state"] == "COMPLETED" and rows["done"]["result"] == "loss 0.5"
    assert rows["broken"]["state"] == "FAILED" and rows["broken"]["result"] == "ValueError: no column y in <data.csv>"
    assert rows["waiter"]["state"] == "CANCELLED"
    assert all(r["device"] == "qhybrid.cpu" and r["instance"] and r["cost"] for r in rows.values())
    assert [r["name"] for r in api("/api/jobs?state=failed")["rows"]] == ["broken"]
    assert [r["name"] for r in api("/api/jobs?q=DON")["rows"]] == ["done"]
    second = api("/api/jobs?offset=1&limit=1")
    assert second["total"] == 3 and [r["name"] for r in second["rows"]] == ["broken"]
    assert request_("GET", "/api/jobs?state=DONE")[0] == 400
    assert request_("GET", "/api/jobs?limit=x")[0] == 400
    assert request_("GET", "/api/jobs/nope")[0] == 404
    assert done.state() == "COMPLETED"


def test_live_updates_while_a_job_runs_then_cancel_ends_it(tmp_path, api, request_, live_script):
    job = Job.create(CPU, str(live_script), job_name="live", hyperparameters={"steps": 400, "pause": 0.05})
    first = wait_for(lambda: (d := api("/api/jobs/live"))["state"] == "RUNNING" and d["metrics"]["series"] and d)
    later = wait_for(lambda: len((d := api("/api/jobs/live"))["metrics"]["series"]["energy"])
                     > len(first["metrics"]["series"]["energy"]) and d)
    assert later["metrics"]["x"] == "iteration" and later["metrics"]["series"]["energy"][0] == [0, -1.0]
    assert '<img src=x onerror="document.title=1">' in later["log"]["text"]  # raw text; the page shows it as text
    assert later["log"]["size"] >= later["log"]["end"] > 0 and later["cost_view"]["so_far_usd"] is not None
    assert request_("GET", "/api/jobs/live/cancel")[0] == 405
    assert api("/api/jobs/live/cancel", "POST") == {"job": "live", "state": "CANCELLED"}
    assert job.state() == "CANCELLED" and api("/api/jobs/live")["state"] == "CANCELLED"
    pid = job._row()["supervisor_pid"]
    from jobkit import gone

    wait_for(lambda: gone(pid), timeout=10)


def test_completed_job_detail_log_pages_and_compare(tmp_path, api, live_script):
    for name, steps in (("short", 3), ("longer", 6)):
        Job.create(CPU, str(live_script), job_name=name, hyperparameters={"steps": steps, "pause": 0}, in_process=True)
    d = api("/api/jobs/longer")
    assert d["state"] == "COMPLETED" and d["optimum"] == -10.0 and d["result_data"]["summary"] == "done <b>bold</b>"
    assert len(d["metrics"]["series"]["energy"]) == 6 and d["hyperparameters"] == {"steps": "6", "pause": "0"}
    assert d["environment"]["packages"]["qhybrid"] and "so far" in d["cost_view"]["text"]
    size = d["log"]["size"]
    piece = api("/api/jobs/longer/log?offset=5&limit=10")
    assert piece["start"] == 5 and piece["end"] == 15 and piece["size"] == size
    assert api("/api/jobs/longer?log_offset=0")["log"]["start"] == 0
    doc = api("/api/compare?jobs=short,longer")
    assert [j["name"] for j in doc["jobs"]] == ["short", "longer"]
    assert [len(j["metrics"]["series"]["energy"]) for j in doc["jobs"]] == [3, 6]
    assert set(doc["jobs"][0]["estimate"]) == {"seconds", "seconds_per_iteration", "cost_usd"}
    assert doc["jobs"][1]["measured"]["cost_usd"] is not None


def test_qhybrid_ui_prints_its_url_and_serves(tmp_path):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "qhybrid", "ui", "--port", "0", "--no-browser"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("qhybrid ui: http://127.0.0.1:") and "/?token=" in line
        url = line.split(" ", 2)[2]
        with urllib.request.urlopen(url.replace("/?", "/api/jobs?"), timeout=10) as res:
            assert json.loads(res.read())["total"] == 0
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_another_interface_warns_and_a_taken_port_is_one_line(capsys):
    from qhybrid.cli import main

    busy = socket.socket()
    busy.bind(("0.0.0.0", 0))  # the port taken on every interface
    busy.listen()
    port = busy.getsockname()[1]
    try:
        assert main(["ui", "--host", "127.0.0.2", "--port", str(port), "--no-browser"]) == 1
        err = capsys.readouterr().err
        assert "warning: serving on 127.0.0.2, reachable from other machines" in err
        assert main(["ui", "--port", str(port), "--no-browser"]) == 1
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"qhybrid: error: cannot serve on 127.0.0.1:{port}") and len(err.splitlines()) == 1
    finally:
        busy.close()
