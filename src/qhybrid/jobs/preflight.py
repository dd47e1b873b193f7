"""Pre-flight checks at submission: refuse, in one line and before anything is written or billed,
a job that can only fail once launched.

- a GPU-only device when the chosen backend has no CUDA (the local backend: this machine);
- a PennyLane device that lacks the requested ``diff_method`` (built-in workloads);
- a built-in workload (``qhybrid/workloads/qaoa.py``, ``qml.py``) whose hyperparameters are
  invalid, whose graph file is unreadable, or whose state vectors do not fit in memory
  (estimates from ``qaoa/memory.py`` and ``sim/memory.py``).

Heavy imports (torch, pennylane, networkx) happen only for the checks that need them: a QAOA job
is checked without torch or numba (on a GPU device the job checks its fit in GPU memory itself,
unless torch is loaded here anyway); whether CUDA is there is the driver's answer, not torch's.
"""
from __future__ import annotations

import sys
from pathlib import Path

from qhybrid.devices import needs_gpu, parse_device
from qhybrid.errors import DeviceError, SpecError

_WORKLOADS = Path(__file__).resolve().parent.parent / "workloads"
# diff methods every device supports (computed from circuit executions alone)
_DEVICE_FREE = ("best", "parameter-shift", "finite-diff", "spsa", "hadamard")


def check(spec) -> None:
    """Run every pre-flight check on a JobSpec.

    Raises:
        DeviceError, SpecError, MemoryLimitError: one line naming the value and what would work.
    """
    from qhybrid.jobs.spec import passes_through

    if passes_through(spec.device):  # None, local:braket/..., ARNs: the script's own business
        return
    dev = parse_device(spec.device)
    if needs_gpu(dev) and spec.backend == "local" and not _local_cuda():
        raise DeviceError(
            f"device {dev} needs CUDA, which this machine does not have (backend 'local'); "
            "use local:qhybrid/qhybrid.cpu or local:pennylane/lightning.qubit, or backend='ray' with GPU nodes"
        )
    source = Path(spec.source)
    if source.parent == _WORKLOADS and source.stem in ("qaoa", "qml"):
        (_qaoa if source.stem == "qaoa" else _qml)(spec, dev)


def _local_cuda() -> bool:
    """A GPU here, by the driver and torch's build (no torch import: the job asks torch itself)."""
    from qhybrid.jobs.instances import cuda_expected

    return cuda_expected()


def check_diff_method(device: str, diff_method: str) -> None:
    """Refuse a PennyLane device that cannot compute ``diff_method`` derivatives.

    Raises:
        DeviceError: naming the device, the method and one that works.
    """
    dev = parse_device(device)
    if dev.provider != "pennylane" or diff_method in _DEVICE_FREE:
        return
    import pennylane as qml
    from pennylane.devices import ExecutionConfig

    device_ = qml.device(dev.name, wires=1)
    supports = getattr(device_, "supports_derivatives", None)
    if supports is not None and not supports(ExecutionConfig(gradient_method=diff_method)):
        raise DeviceError(
            f"device {dev} does not support diff_method={diff_method!r}; use 'parameter-shift' or 'best', "
            "or a device that has it (local:qhybrid/qhybrid.cpu supports 'adjoint')"
        )


def _device_name(dev) -> str:
    return "cuda" if needs_gpu(dev) else "cpu"


def _qaoa(spec, dev) -> None:
    from qhybrid.workloads import qaoa as workload

    settings = workload.parse_settings(spec.hyperparameters)
    check_diff_method(spec.device, settings.diff_method)
    n = settings.n_nodes
    graph = spec.input_data.get("input-graph")
    if graph:
        path = Path(graph)
        files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
        if files:
            try:
                n = workload.read_graph(files[0]).number_of_nodes()
            except SpecError:
                raise
            except Exception as err:  # noqa: BLE001 - any reader failure is an unreadable graph
                raise SpecError(f"cannot read graph {files[0]}: {err}") from None
    from qhybrid.qaoa import memory  # arithmetic and /proc: no torch for a CPU device

    need = memory.required_bytes(n, dtype=settings.dtype)
    # free CUDA memory is torch's answer: asked here only when torch is loaded anyway (importing
    # it costs the command a second or more); otherwise the job's QAOA checks the fit itself
    if _device_name(dev) == "cpu" or ("torch" in sys.modules and _local_cuda()):
        memory.check_fits(need, n=n, device=_device_name(dev))


def _qml(spec, dev) -> None:
    from qhybrid.workloads import qml as workload

    settings = workload.parse_settings(spec.hyperparameters)
    processes = spec.processes_per_instance if spec.distribution else 1
    if _device_name(dev) == "cpu" or ("torch" in sys.modules and _local_cuda()):
        workload.preflight(settings, device=_device_name(dev), processes=processes)
