"""``@hybrid_job``: run a decorated function as a job; arguments in, return value as the result.

The function must be defined at the top level of a file (it is imported from a
snapshot of that file inside the job). Arguments travel as JSON when they can,
as pickle otherwise; the return value is saved as ``{"result": value}`` in
plaintext JSON, or pickled when ``pickle_result=True``.

Example:
    >>> @hybrid_job(device="local:qhybrid/qhybrid.cpu")     # doctest: +SKIP
    ... def train(steps=10):
    ...     return {"loss": 0.1}
    >>> train(steps=5).result()                              # doctest: +SKIP
    {'result': {'loss': 0.1}}
"""
from __future__ import annotations

import base64
import functools
import inspect
import json
import os
import pickle
from pathlib import Path

from qhybrid.errors import SpecError


def _encode_call(args, kwargs, pickle_result: bool) -> dict:
    call = {"result_format": "pickled_v4" if pickle_result else "plaintext"}
    try:
        json.dumps([list(args), kwargs])
        return {**call, "encoding": "json", "args": list(args), "kwargs": kwargs}
    except (TypeError, ValueError):
        payload = base64.b64encode(pickle.dumps((list(args), kwargs), protocol=4)).decode("ascii")
        return {**call, "encoding": "pickle", "payload": payload}


def hybrid_job(
    *,
    device: str,
    instance_config=None,
    job_name: str | None = None,
    input_data=None,
    hyperparameters: dict | None = None,
    copy_checkpoints_from_job: str | None = None,
    distribution: str | None = None,
    max_runtime: float | None = None,
    max_cost: float | None = None,
    wait_until_complete: bool = False,
    processes_per_instance: int | None = None,
    in_process: bool = False,
    pickle_result: bool = False,
    backend: str = "local",
):
    """Decorate a top-level function so that calling it submits a job and returns the Job.

    Args:
        device: the job's device string.
        instance_config, job_name, input_data, hyperparameters, copy_checkpoints_from_job,
        distribution, max_runtime, max_cost, wait_until_complete, processes_per_instance,
        in_process, backend: as in ``Job.create``.
        pickle_result: save the return value pickled (pickled_v4) instead of JSON.

    Raises:
        SpecError: when the function is not a top-level function of a file.
    """

    def decorate(fn):
        source = inspect.getsourcefile(fn)
        if source is None or "<locals>" in fn.__qualname__ or fn.__qualname__ != fn.__name__:
            raise SpecError(
                f"hybrid_job needs a top-level function defined in a .py file; {fn.__qualname__!r} is not"
            )

        entry_point = f"{Path(source).stem}:{fn.__name__}"

        @functools.wraps(fn)
        def submit(*args, **kwargs):
            if os.environ.get("QHYBRID_HYBRID_ENTRY") == entry_point:  # already inside this very job
                return fn(*args, **kwargs)
            from qhybrid.jobs.job import Job

            return Job.create(
                device=device,
                source_module=source,
                entry_point=entry_point,
                job_name=job_name,
                hyperparameters=hyperparameters,
                input_data=input_data,
                instance_config=instance_config,
                copy_checkpoints_from_job=copy_checkpoints_from_job,
                distribution=distribution,
                max_runtime=max_runtime,
                max_cost=max_cost,
                wait_until_complete=wait_until_complete,
                backend=backend,
                processes_per_instance=processes_per_instance,
                in_process=in_process,
                _extra={"call": _encode_call(args, kwargs, pickle_result)},
            )

        return submit

    return decorate
