"""A process's output read in chunks and handed on as blocks of whole lines, in bounded memory.

``read_lines`` reads a pipe in chunks of up to ``CHUNK`` bytes and calls ``on_text(text)`` with
every whole line read so far, joined by newlines (one call per chunk, not per line: a script
printing a metric line in a tight loop is read, parsed and logged as fast as it prints).
``LineSplitter`` is its pure half: bytes in, text out.

A line is what ends in ``\\n``; its trailing ``\\r`` characters are dropped, undecodable bytes
become U+FFFD, and the last line is kept even without a newline. A line longer than ``MAX_LINE``
bytes is cut into pieces of at most that many (at a UTF-8 character boundary), each then a line
of its own: a script printing one endless line cannot make its reader grow without bound.
"""
from __future__ import annotations

import os
import time

CHUNK = 1 << 16  # bytes read at once
MAX_LINE = 1 << 20  # longer lines are cut into lines of this many bytes
SETTLE_S = 0.005  # after a short read, wait this long so that the next read brings many lines


def _cut(data: bytes, limit: int) -> int:
    """Where to cut ``data`` at most ``limit`` bytes in: before a UTF-8 continuation byte run."""
    at = limit
    while at > limit - 3 and at > 0 and (data[at] & 0xC0) == 0x80:
        at -= 1
    return at if at > 0 and (data[at] & 0xC0) != 0x80 else limit


def _decode(block: bytes) -> str:
    text = block.decode("utf-8", errors="replace")
    if "\r" in text:
        text = "\n".join(line.rstrip("\r") for line in text.split("\n"))
    return text


class LineSplitter:
    """Bytes in (``feed``), whole lines out as one text joined by ``\\n`` (see the module docstring).

    Example:
        >>> s = LineSplitter()
        >>> s.feed(b"a\\r\\nb"), s.feed(b"c\\n\\n"), s.end()
        ('a', 'bc\\n', None)
    """

    def __init__(self, *, max_line: int = MAX_LINE):
        self.max_line = max_line
        self._pending = b""  # the line begun but not yet ended, never longer than max_line

    def feed(self, data: bytes) -> str | None:
        """The whole lines completed by ``data`` (None when it completes none)."""
        buf = self._pending + data if self._pending else data
        end = buf.rfind(b"\n")
        block, self._pending = (buf[:end], buf[end + 1:]) if end >= 0 else (None, buf)
        pieces = []
        if block is not None:
            if len(block) > self.max_line:  # rare: a long line ended here; cut the long ones
                block = b"\n".join(b"\n".join(self._pieces(line)) for line in block.split(b"\n"))
            pieces.append(block)
        if len(self._pending) > self.max_line:
            *whole, self._pending = self._pieces(self._pending, keep_last=True)
            pieces += whole
        return _decode(b"\n".join(pieces)) if pieces else None

    def end(self) -> str | None:
        """The last line when it had no newline (None when there is none)."""
        rest, self._pending = self._pending, b""
        return _decode(rest) if rest else None

    def _pieces(self, line: bytes, *, keep_last: bool = False) -> list[bytes]:
        """``line`` cut into pieces of at most ``max_line`` bytes; with ``keep_last`` the last piece
        (the line's unfinished tail) is returned even when empty."""
        out = []
        while len(line) > self.max_line:
            at = _cut(line, self.max_line)
            out.append(line[:at])
            line = line[at:]
        if line or keep_last:
            out.append(line)
        return out


def read_lines(fd: int, on_text, *, chunk: int = CHUNK, settle_s: float = SETTLE_S) -> None:
    """Read ``fd`` until end of file, calling ``on_text(text)`` with each block of whole lines.

    After a read that brought less than a quarter of ``chunk`` (the script prints slowly, or in
    small bursts) it waits ``settle_s`` before reading again, so that one read brings many lines
    rather than one: the pipe (1 MiB where the system allows) holds far more than a script prints
    in that time, so the script never waits on it.
    """
    lines = LineSplitter()
    while True:
        data = os.read(fd, chunk)
        if not data:
            break
        text = lines.feed(data)
        if text is not None:
            on_text(text)
        if len(data) < chunk // 4:
            time.sleep(settle_s)
    rest = lines.end()
    if rest is not None:
        on_text(rest)
