"""A dead supervisor: found by whoever looks, its processes ended, billed to its last heartbeat."""
from __future__ import annotations

import math
import os
import signal
import time

from jobkit import CPU, read_pid, wait_for

from qhybrid import InstanceConfig, Job
from qhybrid.jobs import store


def _priced(tmp_path, monkeypatch):
    prices = tmp_path / "prices.toml"
    prices.write_text('[prices]\n"ml.c5.xlarge" = 60.0\n')  # 1 USD per second
    monkeypatch.setenv("QHYBRID_PRICES", str(prices))


def test_dead_supervisor_is_billed_to_its_last_heartbeat(write_script, tmp_path, monkeypatch):
    _priced(tmp_path, monkeypatch)
    job = Job.create(CPU, write_script("sleep.py", SLEEPS), instance_config=InstanceConfig(instanceType="ml.c5.xlarge"))
    read_pid(store.job_dir(job.name) / "results" / "pid")
    wait_for(lambda: store.get(job.name)["heartbeat"] and store.get(job.name)["heartbeat"] > store.get(job.name)["started"])
    os.kill(store.get(job.name)["supervisor_pid"], signal.SIGKILL)
    time.sleep(2.5)  # time passes after the death: none of it is billed
    job.state()  # whoever looks finds the supervisor dead
    row = store.get(job.name)
    assert row["state"] == "FAILED" and row["ended"] == row["heartbeat"]
    assert row["billed_seconds"] == math.ceil(row["heartbeat"] - row["started"])
    first = job.describe()["estimated_cost_usd"]
    time.sleep(1.1)
    assert job.describe()["estimated_cost_usd"] == first == row["cost"]


SLEEPS = """
    import os, time
    from qhybrid.jobs import results_dir
    (results_dir() / "pid").write_text(str(os.getpid()))
    time.sleep(600)
"""
