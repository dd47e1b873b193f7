"""Pre-flight checks at submission: refuse, in one line and before anything is written or billed,
a job that can only fail once launched.

- a GPU-only device when the chosen backend has no CUDA (the local backend: this machine);
- a built-in workload (``workloads.table``) whose hyperparameters are invalid, or that fails
  its own pre-flight given the job's Target (diff method, graph file, memory).
"""
from __future__ import annotations

from qhybrid.devices import Target, cuda_expected
from qhybrid.errors import DeviceError
from qhybrid.workloads import table


def check(spec, target: Target | None) -> None:
    """Run every pre-flight check on a JobSpec and the Target it was resolved to.

    Args:
        spec: the :class:`~qhybrid.jobs.spec.JobSpec`.
        target: its resolved device; None for a device passed through to the script (not checked).

    Raises:
        DeviceError, SpecError, MemoryLimitError: one line naming the value and what would work.
    """
    if target is None:  # None, local:braket/..., ARNs: the script's own business
        return
    if target.needs_gpu and spec.backend == "local" and not cuda_expected():
        raise DeviceError(
            f"device {target} needs CUDA, which this machine does not have (backend 'local'); "
            "use local:qhybrid/qhybrid.cpu or local:pennylane/lightning.qubit, or backend='ray' with GPU nodes"
        )
    workload = table.find(spec.source, spec.entry_point)
    if workload is not None:
        processes = (spec.processes_per_instance or 1) if spec.distribution else 1
        workload.preflight(workload.parse_settings(spec.hyperparameters), target, input_data=spec.input_data,
                           processes=processes)
