"""The job contract in one place: Braket's environment variables, the job folder's layout and
the persisted-job-data format (``results.json``, checkpoints).

Written by the supervisor and the backends, read by the in-job helpers
(``jobs/script.py``) and by ``Job``. Standard library only (it runs inside every
job process), plus ``qhybrid.errors``, itself standard library only.

Pickled data (``dataFormat: pickled_v4``) runs code when it is loaded, so
``read_persisted`` and ``deserialize_values`` refuse it unless the caller
passes ``allow_pickle=True``, as the Braket SDK does.

Example:
    >>> text = persisted({"loss": 0.25})
    >>> decode(json.loads(text), allow_pickle=False)
    {'loss': 0.25}
"""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

from qhybrid.errors import PersistedDataError, PickleRefusedError

# -- environment variables (Braket's names) -----------------------------------------------------
DEVICE_ENV = "AMZN_BRAKET_DEVICE_ARN"
HP_FILE_ENV = "AMZN_BRAKET_HP_FILE"
INPUT_DIR_ENV = "AMZN_BRAKET_INPUT_DIR"
RESULTS_DIR_ENV = "AMZN_BRAKET_JOB_RESULTS_DIR"
CHECKPOINT_DIR_ENV = "AMZN_BRAKET_CHECKPOINT_DIR"
JOB_NAME_ENV = "AMZN_BRAKET_JOB_NAME"
BRAKET_PREFIX = "AMZN_BRAKET_"
TORCH_THREADS_ENV = "QHYBRID_TORCH_THREADS"
DISTRIBUTED_ENV = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
LOOPBACK = "127.0.0.1"
DEFAULT_DEVICE = "local:qhybrid/qhybrid.cpu"

# -- the job folder ($QHYBRID_HOME/jobs/<name>/) ---------------------------------------------------
SPEC_FILE = "spec.json"
STATE_FILE = "state.json"  # the job's state as recorded with each transition (the index is rebuilt from it)
HP_FILE = "hyperparameters.json"
SOURCE_DIR = "source"
INPUT_DIR = "input"
RESULTS_DIR = "results"
RESULTS_FILE = "results.json"
CHECKPOINT_DIR = "checkpoints"
LOGS_DIR = "logs"
JOB_LOG = "job.log"
SUPERVISOR_LOG = "supervisor.log"
METRICS_FILE = "metrics.jsonl"
CANCEL_FILE = "cancel"
DEFAULT_MAX_RUNTIME_S = 432_000  # a job given no max_runtime stops after 5 days, as Braket's default
RANK_GRACE_ENV = "QHYBRID_RANK_GRACE"  # seconds the other ranks get once one rank ended (default below)
DEFAULT_RANK_GRACE_S = 60.0
DESCENDANTS_FILE = "descendants.json"  # [[pid, start], ...] of every process the job started
CALL_FILE = "_qhybrid_call.json"  # hybrid_job's arguments, inside source/
SUBFOLDERS = (SOURCE_DIR, INPUT_DIR, RESULTS_DIR, CHECKPOINT_DIR, LOGS_DIR)
DIR_MODE = 0o700
FILE_MODE = 0o600


def rank_log(rank: int) -> str:
    """File name of one rank's log inside ``logs/``."""
    return f"rank-{int(rank)}.log"


# -- names ------------------------------------------------------------------------------------------
NAME_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,48}[A-Za-z0-9])?")
CHANNEL_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
SUFFIX_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def is_job_name(name) -> bool:
    """True for a valid job name: 1-50 letters, digits and inner hyphens (the whole string)."""
    return isinstance(name, str) and NAME_RE.fullmatch(name) is not None


def checkpoint_file(job_name: str, suffix: str = "") -> str:
    """Return ``<job>.json`` or ``<job>_<suffix>.json``.

    Raises:
        PersistedDataError: for a job name or suffix that could leave the checkpoint folder.
    """
    if not is_job_name(job_name):
        raise PersistedDataError(
            f"invalid job name {job_name!r}: a checkpoint is named after a job "
            "(1-50 letters, digits and inner hyphens), not a path"
        )
    if suffix in (None, ""):
        return f"{job_name}.json"
    if not isinstance(suffix, str) or SUFFIX_RE.fullmatch(suffix) is None or ".." in suffix:
        raise PersistedDataError(
            f"invalid checkpoint_file_suffix {suffix!r}: use up to 64 letters, digits, '_', '-', '.' (no '..', no '/')"
        )
    return f"{job_name}_{suffix}.json"


# -- persisted job data -----------------------------------------------------------------------------
SCHEMA_HEADER = {"name": "braket.jobs_data.persisted_job_data", "version": "1"}
PLAINTEXT, PICKLED = "plaintext", "pickled_v4"
DATA_FORMATS = (PLAINTEXT, PICKLED)
FORMAT_ALIASES = {"pickle": PICKLED, "pickled": PICKLED}  # the strings notebooks write


def format_name(data_format) -> str:
    """Normalise a data format: ``plaintext`` / ``pickled_v4``, the aliases ``pickle`` and
    ``pickled``, or Braket's ``PersistedJobDataFormat`` enum (or its value).

    Raises:
        PersistedDataError: for any other data format.
    """
    fmt = str(getattr(data_format, "value", data_format)).lower()
    fmt = FORMAT_ALIASES.get(fmt, fmt)
    if fmt not in DATA_FORMATS:
        raise PersistedDataError(
            f"data_format {data_format!r} is not one of {', '.join(map(repr, DATA_FORMATS))} (or 'pickle'), "
            "or Braket's PersistedJobDataFormat"
        )
    return fmt


def serialize_values(data: dict[str, Any], data_format: str) -> dict[str, Any]:
    """Encode a dict's values for the persisted-job-data layout."""
    fmt = format_name(data_format)
    if fmt == PLAINTEXT:
        return dict(data)
    import base64
    import pickle

    return {k: base64.b64encode(pickle.dumps(v, protocol=4)).decode("ascii") for k, v in data.items()}


def deserialize_values(
    data: dict[str, Any], data_format: str, *, allow_pickle: bool = False, what: str = "this data"
) -> dict[str, Any]:
    """Decode a persisted-job-data ``dataDictionary``.

    Raises:
        PickleRefusedError: pickled data without ``allow_pickle=True`` (a PersistedDataError, a
            ValueError, and a RuntimeError as Braket's SDK raises there).
        PersistedDataError: an unknown format.
    """
    fmt = format_name(data_format)
    if fmt == PLAINTEXT:
        return dict(data)
    if not allow_pickle:
        raise PickleRefusedError(
            f"{what} is pickled (dataFormat {PICKLED}); loading it would run code from the file: "
            "pass allow_pickle=True (CLI: --allow-pickle) only if you trust whoever wrote it"
        )
    import base64
    import pickle

    return {k: pickle.loads(base64.b64decode(v)) for k, v in data.items()}


def persisted(data: dict[str, Any], data_format: str = PLAINTEXT) -> str:
    """Return the persisted-job-data JSON text of ``data``."""
    fmt = format_name(data_format)
    return json.dumps({"braketSchemaHeader": SCHEMA_HEADER, "dataDictionary": serialize_values(data, fmt),
                       "dataFormat": fmt})


def load_document(path: str | os.PathLike) -> dict[str, Any]:
    """Read a persisted-job-data file as its JSON document (nothing decoded).

    Raises:
        FileNotFoundError: when it does not exist.
        PersistedDataError: when it is not a complete persisted-job-data document (e.g. truncated).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        doc = json.loads(text)
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as err:
        raise PersistedDataError(f"{path} is unreadable or truncated ({err.__class__.__name__}: {err})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("dataDictionary", {}), dict):
        raise PersistedDataError(f"{path} is not a persisted-job-data document (no dataDictionary object)")
    return doc


def decode(doc: dict[str, Any], *, allow_pickle: bool = False, what: str = "this data") -> dict[str, Any]:
    """Decode a persisted-job-data document's ``dataDictionary``."""
    return deserialize_values(doc.get("dataDictionary", {}), doc.get("dataFormat", PLAINTEXT),
                              allow_pickle=allow_pickle, what=what)


def read_persisted(path: str | os.PathLike, *, allow_pickle: bool = False) -> dict[str, Any]:
    """Read a persisted-job-data file and return its decoded dictionary.

    Raises:
        FileNotFoundError: when it does not exist.
        PersistedDataError: truncated or not persisted-job-data; pickled without ``allow_pickle``.
    """
    return decode(load_document(path), allow_pickle=allow_pickle, what=str(path))


def private_opener(path, flags):
    """``open(..., opener=private_opener)``: files created 0600."""
    return os.open(path, flags, FILE_MODE)


def write_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` (mode 0600) through a temp file in the same folder and a rename."""
    path = Path(path)
    tmp = path.parent / f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        with open(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
