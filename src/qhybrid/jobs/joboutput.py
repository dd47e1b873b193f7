"""A job's output as its supervisor writes it: the job log, one log per rank and ``metrics.jsonl``.

Writes are buffered (the supervisor flushes every ``FLUSH_S``), so a script printing metrics in a
tight loop is not slowed to one write per line per file. A write that fails (a full disk) is kept
in ``_io_error``, never raised into a backend's reader thread; the supervisor then ends the job
FAILED with the reason. ``JobOutput`` is the supervisor's mixin: it holds ``spec``, ``_lock``,
``_log``, ``_rank_logs``, ``_metrics`` and ``_io_error``.
"""
from __future__ import annotations

from qhybrid.jobs import contract, metrics


class JobOutput:
    """The output half of ``Supervisor`` (see the module docstring)."""

    def _open(self, path):
        # buffered, written out every FLUSH_S: a script printing metrics in a tight loop is not slowed
        # to one write per line per file
        return open(path, "a", buffering=1 << 16, encoding="utf-8", opener=contract.private_opener)

    # -- output -------------------------------------------------------------
    def emit(self, text: str) -> None:
        with self._lock:
            try:
                self._log.write(text + "\n")
                self._log.flush()
            except OSError as err:
                self._io_error = self._io_error or err

    def on_line(self, rank: int, line: str) -> None:
        """Record what a process printed, one line or a block of whole lines joined by ``\\n`` (the
        local backend reads in chunks): its log, the job log, and metrics, each in one write. A
        write that fails (a full disk) is kept and ends the job (``_watch``); the text is dropped,
        never raised into the backend's reader, which would stop reading and leave the script
        blocked on its pipe."""
        distributed = self.spec.distribution
        rows = metrics.jsonl(line, rank=rank if distributed else None)
        tagged = logged = line
        if distributed and rank:  # rank K > 0: its metric lines tagged, its job-log lines prefixed
            lines = [metrics.tag_rank(one, rank) for one in line.split("\n")]
            tagged, logged = "\n".join(lines), "\n".join(f"[rank {rank}] {one}" for one in lines)
        with self._lock:
            if self._io_error is not None or self._log.closed:  # a reader that outlived the job's end
                return
            try:
                self._rank_logs[rank].write(tagged + "\n")
                self._log.write(logged + "\n")
                if rows:
                    self._metrics.write(rows)
            except OSError as err:
                self._io_error = err

    def _flush(self) -> OSError | None:
        """Write out the buffered logs and metrics; the first write error seen, if any."""
        with self._lock:
            for f in (*self._rank_logs.values(), self._metrics, self._log):
                if self._io_error is None and f is not None and not f.closed:
                    try:
                        f.flush()
                    except OSError as err:
                        self._io_error = err
            return self._io_error

    def _close(self) -> None:
        with self._lock:  # never while a reader writes a block
            for f in (*self._rank_logs.values(), self._metrics, self._log):
                if f is not None and not f.closed:
                    try:
                        f.close()
                    except OSError as err:  # a full disk: what was buffered is lost, the state is not
                        self._io_error = self._io_error or err
