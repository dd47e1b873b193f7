"""Helpers used *inside* a job: the Braket job contract without the Braket SDK.

Same names, keywords and files as ``braket.jobs``, so a script may use either
library. Outside a job (no ``AMZN_BRAKET_*`` variables) every folder falls back
to ``./qhybrid-local/...`` so scripts also run standalone.

This module imports only the standard library (torch only inside
``distributed``) so that job start-up stays fast.

Example:
    >>> from qhybrid.jobs import hyperparameters, log_metric, save_job_result
    >>> steps = int(hyperparameters().get("steps", "10"))
    >>> log_metric("loss", 0.25, iteration_number=0)  # doctest: +SKIP
    >>> save_job_result({"loss": 0.25})                # doctest: +SKIP
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from qhybrid.devices import cuda_available, cuda_device_count, resolve
from qhybrid.errors import DeviceError
from qhybrid.jobs import contract
from qhybrid.jobs.contract import (  # noqa: F401  (re-exported: the codec's old home)
    DATA_FORMATS,
    DEFAULT_DEVICE,
    SCHEMA_HEADER,
    TORCH_THREADS_ENV,
    deserialize_values,
    persisted,
    read_persisted,
    serialize_values,
    write_atomic,
)

_LOCAL_ROOT = "qhybrid-local"


def _folder(env: str, fallback: str) -> Path:
    value = os.environ.get(env)
    path = Path(value) if value else Path.cwd() / _LOCAL_ROOT / fallback
    path.mkdir(parents=True, exist_ok=True)
    return path


def hyperparameters() -> dict[str, str]:
    """Return the job's hyperparameters (all values are strings, as in Braket).

    Returns:
        The dict read from ``AMZN_BRAKET_HP_FILE``; ``{}`` when unset.
    """
    path = os.environ.get(contract.HP_FILE_ENV)
    if not path:
        return {}
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def device() -> str:
    """Return the job's device string (``AMZN_BRAKET_DEVICE_ARN``)."""
    return os.environ.get(contract.DEVICE_ENV) or DEFAULT_DEVICE


def job_name() -> str:
    """Return the job's name (``AMZN_BRAKET_JOB_NAME``; ``local-job`` outside a job)."""
    return _current_job_name()


def _current_job_name() -> str:
    return os.environ.get(contract.JOB_NAME_ENV) or "local-job"


def input_dir(channel: str = "input") -> Path:
    """Return the folder of one input channel (``$AMZN_BRAKET_INPUT_DIR/<channel>``)."""
    base = os.environ.get(contract.INPUT_DIR_ENV)
    root = Path(base) if base else Path.cwd() / _LOCAL_ROOT / "input"
    return root / channel


def results_dir() -> Path:
    """Return the folder for ``results.json`` and other outputs."""
    return _folder(contract.RESULTS_DIR_ENV, "results")


def checkpoint_dir() -> Path:
    """Return the checkpoint folder (``AMZN_BRAKET_CHECKPOINT_DIR``)."""
    return _folder(contract.CHECKPOINT_DIR_ENV, "checkpoints")


# Braket's own names (braket.jobs.environment_variables), returning strings as it does.
def get_hyperparameters() -> dict[str, str]:
    """Alias of ``hyperparameters`` under Braket's name."""
    return hyperparameters()


def get_job_device_arn() -> str:
    """Alias of ``device`` under Braket's name."""
    return device()


def get_job_name() -> str:
    """Alias of ``job_name`` under Braket's name."""
    return job_name()


def get_input_data_dir(channel: str = "input") -> str:
    """Alias of ``input_dir`` under Braket's name (a string)."""
    return str(input_dir(channel))


def get_results_dir() -> str:
    """Alias of ``results_dir`` under Braket's name (a string)."""
    return str(results_dir())


def get_checkpoint_dir() -> str:
    """Alias of ``checkpoint_dir`` under Braket's name (a string)."""
    return str(checkpoint_dir())


def load_job_result(filename: str | os.PathLike | None = None, *, allow_pickle: bool = False) -> dict[str, Any]:
    """Load ``results.json`` of this job (or ``filename``), decoded.

    Raises:
        PersistedDataError: pickled data without ``allow_pickle=True``; a truncated file.
    """
    return read_persisted(filename or results_dir() / contract.RESULTS_FILE, allow_pickle=allow_pickle)


def save_return_value(value, *, data_format: str, hint: str, wrap: bool) -> None:
    """Save a job function's return ``value`` (as ``{"result": value}`` when ``wrap``); plain
    text that cannot hold it is refused in one line pointing at ``hint`` (how to pickle)."""
    data = {"result": value} if wrap else value
    if data_format == "plaintext":
        try:
            json.dumps(data)
        except (TypeError, ValueError):
            raise TypeError(f"the job's return value ({type(value).__name__}) is not JSON-serializable; "
                            f"return JSON data or use {hint}") from None
    save_job_result(data, data_format=data_format)


def save_job_result(result_data: dict[str, Any] | Any, data_format: str | None = None) -> None:
    """Save the job's result as ``results.json`` (persisted-job-data layout, atomic).

    A non-dict value is saved as ``{"result": value}``. Saving again updates the
    earlier keys when both use the same data format (as Braket does); earlier
    pickled values are kept encoded, never unpickled. With ``data_format=None`` a
    result already pickled stays pickled (as Braket), else it is plaintext.

    Raises:
        ValueError: on an empty result or an unknown data format.
        TypeError: when plaintext values are not JSON-serializable.
    """
    if result_data is None or (isinstance(result_data, dict) and not result_data):
        raise ValueError("result_data can not be empty")
    if not isinstance(result_data, dict):
        result_data = {"result": result_data}
    fmt = contract.format_name(data_format or contract.PLAINTEXT)
    path = results_dir() / contract.RESULTS_FILE
    old = None
    if path.exists():
        try:
            old = contract.load_document(path)
            if old.get("dataFormat") == contract.PICKLED and data_format is None:
                fmt = contract.PICKLED  # as Braket: results already pickled stay pickled
        except (OSError, ValueError, KeyError):
            old = None
    encoded = serialize_values(result_data, fmt)
    if old is not None and old.get("dataFormat") == fmt:
        encoded = {**old["dataDictionary"], **encoded}
    write_atomic(path, json.dumps({"braketSchemaHeader": SCHEMA_HEADER, "dataDictionary": encoded, "dataFormat": fmt}))


def _checkpoint_path(name: str, suffix: str) -> Path:
    return checkpoint_dir() / contract.checkpoint_file(name, suffix)


def save_job_checkpoint(
    checkpoint_data: dict[str, Any], checkpoint_file_suffix: str = "", data_format: str = "plaintext"
) -> None:
    """Save a checkpoint as ``<job_name>(_<suffix>).json`` in the checkpoint folder (atomic).

    Raises:
        ValueError: on empty checkpoint data; PersistedDataError on a suffix that is a path.
    """
    if not checkpoint_data:
        raise ValueError("checkpoint_data can not be empty")
    write_atomic(_checkpoint_path(_current_job_name(), checkpoint_file_suffix), persisted(checkpoint_data, data_format))


def load_job_checkpoint(
    job_name: str | None = None, checkpoint_file_suffix: str = "", *, allow_pickle: bool = False
) -> dict[str, Any]:
    """Load the checkpoint ``<job_name>(_<suffix>).json`` (default: this job's own) from the
    checkpoint folder; ``job_name`` is a job's name, never a path.

    Raises:
        FileNotFoundError: when no such checkpoint exists.
        PersistedDataError: a name or suffix that is a path; pickled data without ``allow_pickle=True``.
    """
    name = _current_job_name() if job_name is None else job_name
    return read_persisted(_checkpoint_path(name, checkpoint_file_suffix), allow_pickle=allow_pickle)


def latest_checkpoint(checkpoint_file_suffix: str = "", *, allow_pickle: bool = False) -> dict[str, Any] | None:
    """The checkpoint to resume from: this job's own, else the newest one copied in from an
    earlier job (``copy_checkpoints_from_job``); None when there is none.

    Only files named ``<job>_<suffix>.json`` count when a suffix is given.

    Raises:
        PersistedDataError: pickled data without ``allow_pickle=True``.
    """
    folder = checkpoint_dir()
    own = _checkpoint_path(_current_job_name(), checkpoint_file_suffix)
    tail = f"_{checkpoint_file_suffix}.json" if checkpoint_file_suffix else ".json"
    found = [own] if own.is_file() else sorted(
        (p for p in folder.glob(f"*{tail}") if p.is_file() and not p.is_symlink()), key=lambda p: p.stat().st_mtime
    )
    if not found:
        return None
    return read_persisted(found[-1], allow_pickle=allow_pickle)


#: How a line of :func:`say_started` begins (the CLI's progress looks for it)
STARTED_MARK = "qhybrid: started "


def say_started(what: str) -> None:
    """Tell the job's log what the job started, before its first iteration's metrics (``workloads.qml``:
    "training epoch 1 of 3 (...)"): the CLI's progress names the wait so (not "loading the engine")
    and does not show the line, which stays in the job's log."""
    print(f"{STARTED_MARK}{what}", flush=True)


def log_metric(
    metric_name: str, value: float, timestamp: float | None = None, iteration_number: int | None = None
) -> None:
    """Print a metric line the runtime records: ``Metrics - timestamp=..; name=value; iteration_number=..;``."""
    line = f"Metrics - timestamp={time.time() if timestamp is None else timestamp}; {metric_name}={value};"
    if iteration_number is not None:
        line += f" iteration_number={iteration_number};"
    print(line, flush=True)


def distributed() -> dict[str, int]:
    """Join the data-parallel group of this job and return its coordinates.

    Reads RANK / LOCAL_RANK / WORLD_SIZE (defaults 0 / 0 / 1), applies the
    job's torch thread count, sets the CUDA device to LOCAL_RANK when CUDA is
    available, and initialises the default ``torch.distributed`` process group
    (gloo on CPU, nccl on CUDA) when WORLD_SIZE > 1 and it is not yet initialised.

    Returns:
        ``{"world_size": W, "rank": R, "local_rank": L}``.
    """
    info = {
        "world_size": int(os.environ.get("WORLD_SIZE", "1")),
        "rank": int(os.environ.get("RANK", "0")),
        "local_rank": int(os.environ.get("LOCAL_RANK", "0")),
    }
    import torch

    threads = os.environ.get(TORCH_THREADS_ENV)
    if threads:
        torch.set_num_threads(max(1, int(threads)))
    gpu = rank_gpu(info["local_rank"])
    if gpu is not None:
        torch.cuda.set_device(gpu)
    if info["world_size"] > 1:
        import torch.distributed as dist

        if not dist.is_initialized():
            os.environ.setdefault("MASTER_ADDR", contract.LOOPBACK)
            os.environ.setdefault("MASTER_PORT", "29500")
            dist.init_process_group(
                backend="nccl" if gpu is not None else "gloo", rank=info["rank"], world_size=info["world_size"]
            )
    return info


def rank_gpu(local_rank: int) -> int | None:
    """The CUDA device a data-parallel rank runs on: its local rank modulo the GPUs torch sees, when
    the job's device needs a GPU and there is CUDA (``devices``); None otherwise (CPU tensors, gloo)."""
    if not cuda_available() or not device_needs_gpu():
        return None
    return local_rank % max(1, cuda_device_count())


def device_needs_gpu() -> bool:
    """Whether the job's device runs on a GPU (``devices.resolve``; False for a device string qhybrid
    passes through to the script: None, ``local:braket/...``, an ARN)."""
    try:
        return resolve(device()).needs_gpu
    except DeviceError:
        return False
