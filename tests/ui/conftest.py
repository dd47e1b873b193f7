"""Shared by the dashboard tests: one server for the module, HTTP helpers, job scripts."""
from __future__ import annotations

import http.client
import json
import textwrap
from urllib.parse import quote

import pytest

from qhybrid.ui.server import Dashboard

CPU = "local:qhybrid/qhybrid.cpu"

# A job that runs for a while, logging an energy per iteration (and text that must stay text).
LIVE_SCRIPT = """
    import time
    from qhybrid.jobs import hyperparameters, log_metric, save_job_result
    hp = hyperparameters()
    steps, pause = int(hp.get("steps", "20")), float(hp.get("pause", "0.1"))
    print('<img src=x onerror="document.title=1">', flush=True)
    for i in range(steps):
        log_metric("energy", -10 + 9 / (i + 1), iteration_number=i)
        log_metric("iteration_seconds", pause, iteration_number=i)
        time.sleep(pause)
    save_job_result({"energy": -10 + 9 / steps, "optimum": -10.0, "summary": "done <b>bold</b>"})
"""


@pytest.fixture(scope="session")
def board():
    """One dashboard on a free loopback port for the session; it serves whichever QHYBRID_HOME
    the current test has (the store is found from the environment at each request)."""
    server = Dashboard(port=0).start()
    yield server
    server.stop()


@pytest.fixture
def request_(board):
    """``request_(method, path, token=..., host=..., header_token=...)`` -> (status, headers, body)."""

    def send(method: str, path: str, *, token: str | None = "ok", host: str | None = None, header_token: bool = False):
        token = board.token if token == "ok" else token
        if token is not None and not header_token:
            path += ("&" if "?" in path else "?") + "token=" + quote(token)
        conn = http.client.HTTPConnection("127.0.0.1", board.port, timeout=10)
        headers = {"Host": f"127.0.0.1:{board.port}" if host is None else host}
        if header_token and token is not None:
            headers["X-Qhybrid-Token"] = token
        conn.request(method, path, headers=headers)
        res = conn.getresponse()
        body = res.read()
        conn.close()
        return res.status, dict(res.getheaders()), body

    return send


@pytest.fixture
def api(request_):
    """``api(path, method="GET")`` -> the JSON document (asserting a 200)."""

    def call(path: str, method: str = "GET"):
        status, _headers, body = request_(method, path)
        assert status == 200, body
        return json.loads(body)

    return call


@pytest.fixture
def live_script(tmp_path):
    path = tmp_path / "live.py"
    path.write_text(textwrap.dedent(LIVE_SCRIPT))
    return path


@pytest.fixture
def cli():
    """``cli(*argv)`` runs the qhybrid app through Typer's runner (plain output, 80 columns)."""
    from typer.testing import CliRunner

    from qhybrid.cli import app

    def invoke(*argv, **kwargs):
        env = {"NO_COLOR": "1", "COLUMNS": "80", **kwargs.pop("env", {})}
        return CliRunner().invoke(app, [str(a) for a in argv], env=env, **kwargs)

    return invoke
