"""Errors for people: one base class, each error also a builtin it resembles.

Every message names the bad value and says what would be valid.
"""
from __future__ import annotations


class QhybridError(Exception):
    """Base class of every error qhybrid raises on purpose."""


class DeviceError(QhybridError, ValueError):
    """A bad device string, unknown provider/simulator, or an unusable device (no CUDA)."""


class OperationError(QhybridError, ValueError):
    """An operation or observable the engine cannot run (unknown name, bad wires, non-unitary)."""


class WireError(OperationError):
    """Wires outside the device or repeated on one operation."""


class MemoryLimitError(QhybridError, MemoryError):
    """A simulation that would need more memory than is available."""


class SpecError(QhybridError, ValueError):
    """A bad job specification (name, source, entry point, hyperparameters, input, instance)."""


class InstanceError(SpecError):
    """An unknown instance type or an instance that cannot run the requested device."""


class JobError(QhybridError, RuntimeError):
    """A job-level failure reported to the caller (job failed, result missing, timeout waiting)."""


class JobNotFoundError(QhybridError, LookupError):
    """No job with that name in the store."""


class ClusterError(QhybridError, RuntimeError):
    """A Ray cluster that cannot be reached or can never fit a request."""


class PersistedDataError(QhybridError, ValueError):
    """A results or checkpoint file refused (pickled without allow_pickle, a name that is a path)
    or unreadable (truncated, not persisted-job-data)."""


class PickleRefusedError(PersistedDataError, RuntimeError):
    """Pickled data (dataFormat pickled_v4) not loaded because ``allow_pickle`` is off. Also a
    RuntimeError: Braket's SDK raises RuntimeError there (``braket.jobs.serialization.
    deserialize_values``), so code written to catch Braket's error catches ours."""


class StoreError(QhybridError, OSError):
    """A job store (QHYBRID_HOME) that cannot be used: relative, a file, unwritable, read-only."""


class UIError(QhybridError, OSError):
    """The dashboard (``qhybrid ui``) cannot serve: the port is taken, the interface unknown."""


def closest(value: str, valid, n: int = 3) -> list[str]:
    """Return up to `n` entries of `valid` that look like `value` (for 'did you mean')."""
    import difflib

    return difflib.get_close_matches(value, list(valid), n=n, cutoff=0.5)
