"""A process's output read in chunks: whole lines, in order, in bounded memory (jobs/lines.py) and the
local backend reading its processes that way."""
from __future__ import annotations

import os
import sys
import threading

import pytest

from qhybrid.jobs import lines
from qhybrid.jobs.backends import ProcessSpec
from qhybrid.jobs.backends.local import Backend as LocalBackend
from qhybrid.jobs.lines import LineSplitter, read_lines


def _split(data: bytes, step: int, **kw) -> list[str]:
    """Every line ``LineSplitter`` makes of ``data`` fed ``step`` bytes at a time."""
    splitter, out = LineSplitter(**kw), []
    for at in range(0, len(data), step):
        text = splitter.feed(data[at:at + step])
        if text is not None:
            out += text.split("\n")
    rest = splitter.end()
    return out + ([rest] if rest is not None else [])


@pytest.mark.parametrize("step", [1, 2, 3, 7, 64, 1 << 16])
def test_lines_come_out_whole_and_in_order_however_the_bytes_arrive(step):
    data = "a\r\nλoss=1;\n\n损失 x\r\r\nlast, no newline".encode()
    assert _split(data, step) == ["a", "λoss=1;", "", "损失 x", "last, no newline"]


def test_undecodable_bytes_become_replacement_characters_and_the_line_stays():
    data = b"Metrics - a=1;\xff\xfe\nok\xe2\x82\n\xe2\x82\xac\n"
    assert _split(data, 5) == ["Metrics - a=1;\ufffd\ufffd", "ok\ufffd", "€"]


def test_a_line_longer_than_the_limit_is_cut_at_character_boundaries_in_bounded_memory():
    splitter = LineSplitter(max_line=10)
    out = []
    for _ in range(50):  # one endless line of 3-byte characters, 7 bytes at a time
        text = splitter.feed("€€".encode()[:6] + b"x")
        assert len(splitter._pending) <= 10  # never holds more than one line's worth
        out += text.split("\n") if text is not None else []
    out.append(splitter.end())
    assert "".join(out) == "€€x" * 50 and all(len(piece.encode()) <= 10 for piece in out)
    assert "\ufffd" not in "".join(out)


def test_a_long_line_that_ends_within_a_chunk_is_cut_too():
    assert _split(b"0123456789abcdef\nxy\n", 100, max_line=6) == ["012345", "6789ab", "cdef", "xy"]


def test_read_lines_hands_on_blocks_of_lines_from_a_pipe():
    read_fd, write_fd = os.pipe()
    got: list[str] = []
    reader = threading.Thread(target=read_lines, args=(read_fd, got.append))
    reader.start()
    os.write(write_fd, "".join(f"line {i}\n" for i in range(5000)).encode() + b"tail")
    os.close(write_fd)
    reader.join(10)
    os.close(read_fd)
    assert "\n".join(got).split("\n") == [f"line {i}" for i in range(5000)] + ["tail"]
    assert len(got) < 100


def test_the_local_backend_hands_a_burst_of_lines_on_in_blocks():
    # one call per line (the old reader) made the supervisor's per-call work the job's bottleneck
    n = 20_000
    code = f"import sys\nfor i in range({n}):\n    print(f'Metrics - x={{i}};', flush=True)\nsys.stdout.write('end')"
    calls: list[tuple[int, str]] = []
    backend = LocalBackend()
    backend.launch([ProcessSpec(rank=0, argv=[sys.executable, "-c", code], env=dict(os.environ))],
                   lambda rank, text: calls.append((rank, text)))
    while backend.poll()[0] is None:
        threading.Event().wait(0.05)
    backend.drain(timeout=10)
    assert "\n".join(text for _rank, text in calls).split("\n") == [f"Metrics - x={i};" for i in range(n)] + ["end"]
    assert len(calls) < n // 10, len(calls)


def test_read_lines_waits_after_a_short_read_only(monkeypatch):
    naps: list[float] = []
    monkeypatch.setattr(lines.time, "sleep", naps.append)
    read_fd, write_fd = os.pipe()
    os.write(write_fd, b"x" * 63 + b"\n")
    os.close(write_fd)
    read_lines(read_fd, lambda text: None, chunk=64)  # one full read: no wait
    os.close(read_fd)
    assert naps == []
    read_fd, write_fd = os.pipe()
    os.write(write_fd, b"short\n")
    os.close(write_fd)
    read_lines(read_fd, lambda text: None, chunk=64, settle_s=0.25)  # a short read: wait for more
    os.close(read_fd)
    assert naps == [0.25]
