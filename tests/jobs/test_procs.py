"""Process identity, descendants and the subreaper, with real processes."""
from __future__ import annotations

import subprocess
import sys

from jobkit import gone, wait_for

from qhybrid.jobs import procs

# a child that starts a grandchild in its own session, ignoring SIGTERM, prints its pid and exits
ESCAPER = """
import subprocess, sys
g = subprocess.Popen([sys.executable, "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"],
    start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(g.pid, flush=True)
"""

SUBREAPER = f"""
import subprocess, sys, time
from qhybrid.jobs import procs
assert procs.become_subreaper()
out = subprocess.run([sys.executable, "-c", {ESCAPER!r}], capture_output=True, text=True).stdout
pid = int(out)
assert [pid, procs.start_time(pid)] in procs.descendants()  # re-parented to us, still found
print(pid, procs.end_descendants(grace=0.5), flush=True)
"""


def test_a_subreaper_finds_and_ends_orphans_that_left_its_session():
    out = subprocess.run([sys.executable, "-c", SUBREAPER], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    pid, found = map(int, out.stdout.split())
    assert found == 1 and gone(pid)


def test_descendants_of_a_tree_and_kill_pids():
    proc = subprocess.Popen([sys.executable, "-c", "import subprocess, sys, time; "
                             "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); time.sleep(600)"])
    try:
        tree = wait_for(lambda: len(procs.descendants(proc.pid)) == 1 and procs.descendants(proc.pid))
        procs.kill_pids([[proc.pid, procs.start_time(proc.pid)], *tree], grace=0.5)
        proc.wait(timeout=10)
        wait_for(lambda: gone(tree[0][0]))
    finally:
        proc.kill()


def test_kill_pids_skips_a_reused_pid():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        procs.kill_pids([[proc.pid, "not-its-start-time"]], grace=0.1)
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


def test_spared_children_and_their_trees_are_left_running_and_unreaped():
    spared = subprocess.Popen([sys.executable, "-c", ESCAPER.replace("print(g.pid", "import time; print(g.pid")
                               + "time.sleep(600)\n"], stdout=subprocess.PIPE, text=True)
    done = subprocess.Popen(["false"])  # finished (status 1), not yet waited for: still our child
    try:
        grandchild = int(spared.stdout.readline())
        wait_for(lambda: procs.start_time(done.pid) is None)
        assert {spared.pid, done.pid} <= procs.children()
        assert procs.descendants(spare={spared.pid, done.pid}) == []
        assert procs.end_descendants(grace=0.1, spare={spared.pid, done.pid}) == 0
        assert spared.poll() is None and not gone(grandchild)
        assert done.wait(timeout=5) == 1  # not reaped behind the Popen's back: its exit status is intact
    finally:
        procs.kill_pids([[spared.pid, None], [grandchild, None]], grace=0.1)
        spared.wait(timeout=10)


def test_subreaper_block_restores_the_setting():
    import ctypes

    def flag():
        value = ctypes.c_int(0)
        ctypes.CDLL(None, use_errno=True).prctl(37, ctypes.byref(value), 0, 0, 0)
        return value.value

    before = flag()
    with procs.subreaper():
        assert flag() == 1
    assert flag() == before


# a child made to die with its parent (as the local backend and the Ray worker start ranks), then
# the parent waits to be killed
ORPHANED = """
import subprocess, sys, time
from qhybrid.jobs import procs
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], preexec_fn=procs.die_with_parent)
print(child.pid, flush=True)
time.sleep(600)
"""


def test_a_child_that_dies_with_its_parent_ends_when_the_parent_is_killed():
    parent = subprocess.Popen([sys.executable, "-c", ORPHANED], stdout=subprocess.PIPE, text=True)
    try:
        child = int(parent.stdout.readline())
        assert not gone(child)
        parent.kill()
        parent.wait(timeout=10)
        assert wait_for(lambda: gone(child), timeout=10)
    finally:
        parent.kill()
        parent.wait(timeout=10)


def test_prctl_reports_failure():
    assert procs.prctl(procs.PR_SET_PDEATHSIG, 10_000) is False  # no such signal: EINVAL
