"""The in-process backend: the job runs in the caller, and no process it started outlives it."""
from __future__ import annotations

import ctypes
import subprocess
import sys

from jobkit import CPU, gone, wait_for

from qhybrid import Job
from qhybrid.jobs import procs

# A child that ignores SIGTERM in a session of its own, and an orphan: a grandchild whose parent
# exited at once (re-parented to the subreaper); both would run for ten minutes.
LEAVES_TWO = """
    import subprocess, sys
    from qhybrid.jobs import results_dir, save_job_result
    stubborn = subprocess.Popen([sys.executable, "-c",
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"],
        start_new_session=True)
    spawn = ("import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], "
             "start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid)")
    orphan = int(subprocess.run([sys.executable, "-c", spawn], capture_output=True, text=True, check=True).stdout)
    save_job_result({"pids": [stubborn.pid, orphan]})
"""


def _is_subreaper() -> bool:
    flag = ctypes.c_int(0)
    ctypes.CDLL(None, use_errno=True).prctl(37, ctypes.byref(flag), 0, 0, 0)  # PR_GET_CHILD_SUBREAPER
    return bool(flag.value)


def test_in_process_job_ends_what_it_started_and_spares_the_callers(write_script):
    before = _is_subreaper()
    keeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])  # the caller's own
    pids = []
    try:
        job = Job.create(CPU, write_script("leaves.py", LEAVES_TWO), in_process=True, job_name="inproc-tree")
        assert job.state() == "COMPLETED"
        stubborn, orphan = pids = job.result()["pids"]
        wait_for(lambda: gone(stubborn) and gone(orphan), timeout=10)
        assert "qhybrid: ended 2 process(es) the job left behind" in job.logs()
        assert keeper.poll() is None  # started before the job: not the job's
        assert _is_subreaper() == before  # the caller's setting is back
    finally:  # a failing run leaves nothing behind either
        procs.kill_pids([[pid, None] for pid in pids], grace=0.1)
        keeper.kill()
        keeper.wait(timeout=10)
