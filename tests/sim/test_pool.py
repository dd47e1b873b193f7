"""Python threads for the serial kernels (sim/pool.py)."""
from __future__ import annotations

import threading

import pytest

from qhybrid.sim import pool
from qhybrid.sim.registry import PARALLEL_MIN


def test_slices_cover_the_rows_without_empty_ones():
    for n, parts in [(7, 3), (2, 5), (0, 2), (16, 2)]:
        cut = pool.slices(n, parts)
        assert [i for s in cut for i in range(n)[s]] == list(range(n))
        assert len(cut) == max(1, min(n, parts)) and all(s.stop > s.start for s in cut if n)


def test_run_parts_runs_every_call_on_threads_and_reraises():
    seen = {}

    def record(k):
        seen[k] = threading.get_ident()

    pool.run_parts(record, [(k,) for k in range(3)])
    assert sorted(seen) == [0, 1, 2] and seen[0] == threading.get_ident()

    def fail(k):
        if k == 1:
            raise ValueError("part 1")

    with pytest.raises(ValueError, match="part 1"):
        pool.run_parts(fail, [(0,), (1,)])


def test_small_states_run_on_one_thread():
    assert pool.threads_for(PARALLEL_MIN - 1) == 1
    assert pool.threads_for(PARALLEL_MIN) >= 1


def test_a_forked_child_gets_its_own_pool():
    import os
    import signal

    pool.run_parts(lambda k: None, [(0,), (1,)])  # the parent's pool exists
    pid = os.fork()
    if pid == 0:  # the child: the copied pool has no threads; a new one must serve
        signal.alarm(30)  # a hang ends the child (SIGALRM), not the test run
        try:
            out = []
            pool.run_parts(out.append, [(0,), (1,)])
            os._exit(0 if sorted(out) == [0, 1] else 1)
        finally:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
