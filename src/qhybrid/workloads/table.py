"""The built-in workloads, one table: each one's script, settings parser and pre-flight.

Submission (``qhybrid.submit.preflight``) and the estimate (``qhybrid.estimate``) ask
:func:`find` whether a job runs a built-in workload, then its entry for how to parse the
job's hyperparameters and what to check before anything is written: the diff method on
the device, the graph file, whether the state vectors fit in memory, given the resolved
:class:`~qhybrid.devices.Target`.

Heavy imports (torch, pennylane, networkx) happen only inside the checks that need them: a
QAOA job is checked without torch or numba (on a GPU device the job checks its fit in GPU
memory itself, unless torch is loaded here anyway); whether CUDA is there is the driver's
answer (``devices.cuda_expected``), not torch's.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from qhybrid.devices import Target, cuda_expected
from qhybrid.errors import DeviceError, SpecError
from qhybrid.workloads import qaoa, qml

# diff methods every device supports (computed from circuit executions alone)
DEVICE_FREE = ("best", "parameter-shift", "finite-diff", "spsa", "hadamard")


@dataclass(frozen=True)
class Workload:
    """A built-in workload: its name (also its entry point), module, settings parser and pre-flight."""

    name: str
    module: Any
    parse_settings: Callable[[dict], Any]
    preflight: Callable[..., None]  # (settings, target, *, input_data, processes) -> None, raising one line

    @property
    def path(self) -> Path:
        return Path(self.module.__file__).resolve()


def check_diff_method(target: Target, diff_method: str) -> None:
    """Refuse a PennyLane device that cannot compute ``diff_method`` derivatives.

    Raises:
        DeviceError: naming the device, the method and one that works.
    """
    if target.provider != "pennylane" or diff_method in DEVICE_FREE:
        return
    import pennylane as qml_  # start-up: pennylane only for a PennyLane device's non-generic method
    from pennylane.devices import ExecutionConfig

    device_ = qml_.device(target.name, wires=1)
    supports = getattr(device_, "supports_derivatives", None)
    if supports is not None and not supports(ExecutionConfig(gradient_method=diff_method)):
        raise DeviceError(
            f"device {target} does not support diff_method={diff_method!r}; use 'parameter-shift' or 'best', "
            "or a device that has it (local:qhybrid/qhybrid.cpu supports 'adjoint')"
        )


def _graph_nodes(graph: str | None, default: int) -> int:
    """The node count of the job's graph file (the first file of its channel), else ``default``."""
    if not graph:
        return default
    path = Path(graph)
    files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
    if not files:
        return default
    try:
        return qaoa.read_graph(files[0]).number_of_nodes()
    except SpecError:
        raise
    except Exception as err:  # noqa: BLE001 - any reader failure is an unreadable graph
        raise SpecError(f"cannot read graph {files[0]}: {err}") from None


def qaoa_preflight(settings, target: Target, *, input_data: dict, processes: int = 1) -> None:
    """QAOA: the diff method on the device, the graph file, the state vector in memory
    (``processes``, the ranks sharing an instance, is not counted: each rank checks its own fit)."""
    from qhybrid.qaoa import memory  # arithmetic and /proc: no torch for a CPU device

    check_diff_method(target, settings.diff_method)
    n = _graph_nodes(input_data.get("input-graph"), settings.n_nodes)
    need = memory.required_bytes(n, dtype=settings.dtype, symmetric=settings.problem == "maxcut",
                                 layers=settings.n_layers)
    # free CUDA memory is torch's answer: asked here only when torch is loaded anyway (importing
    # it costs the command a second or more); otherwise the job's QAOA checks the fit itself
    if not target.needs_gpu or ("torch" in sys.modules and cuda_expected()):
        memory.check_fits(need, n=n, device=target.torch_device)


def qml_preflight(settings, target: Target, *, input_data: dict, processes: int = 1) -> None:
    """QML: at least one sample's states fit this process's share of the free memory (the engine's
    chunk rule, :func:`qhybrid.workloads.qml.preflight`); ``processes``: ranks sharing an instance."""
    # no torch for a CPU device (arithmetic and /proc); free CUDA memory is torch's answer: asked
    # only when torch is loaded anyway, otherwise the job's layer checks the fit itself
    if not target.needs_gpu or ("torch" in sys.modules and cuda_expected()):
        qml.preflight(settings, device=target.torch_device, kernels=target.kernels, processes=processes)


WORKLOADS = {
    "qaoa": Workload("qaoa", qaoa, qaoa.parse_settings, qaoa_preflight),
    "qml": Workload("qml", qml, qml.parse_settings, qml_preflight),
}


def find(source, entry_point: str | None = None) -> Workload | None:
    """The built-in workload a job's ``source`` (and ``entry_point``) runs, or None for any other script."""
    try:
        src = Path(source).resolve()
    except TypeError:
        return None
    for workload in WORKLOADS.values():
        if src == workload.path and entry_point in (None, workload.name):
            return workload
    return None


def settings_of(spec) -> tuple[str | None, Any]:
    """``(workload name, parsed settings)`` of a job spec (its ``source``, ``entry_point`` and
    ``hyperparameters``) that runs a built-in workload, else ``(None, None)``: a script.

    Raises:
        SpecError: the workload's hyperparameters do not parse.
    """
    workload = find(spec.source, spec.entry_point)
    if workload is None:
        return None, None
    return workload.name, workload.parse_settings(spec.hyperparameters)
