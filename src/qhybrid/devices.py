"""Device strings ``local:<provider>/<name>`` -> a simulator.

Providers:
- ``qhybrid``: our engine, ``qhybrid.cpu`` and ``qhybrid.gpu``;
- ``pennylane``: any installed PennyLane device (read from the
  ``pennylane.plugins`` entry points, nothing imported).

``resolve(device_string)`` answers everything a caller decides from a device string,
once: a :class:`Target` (provider, name, torch device, whether it needs a GPU, the
kernel set that will run: its name, and ``Target.kernel_set()`` the loaded set, imported
only when asked for). ``parse_device`` and ``needs_gpu`` are thin views of it.

Example:
    >>> parse_device("local:pennylane/lightning.qubit")
    DeviceSpec(provider='pennylane', name='lightning.qubit')
    >>> resolve("local:qhybrid/qhybrid.gpu").torch_device
    'cuda'
"""
from __future__ import annotations

import functools
import importlib.util
import re
from dataclasses import dataclass

from qhybrid.errors import DeviceError, closest
from qhybrid.sim.triton.status import MIN_CAPABILITY  # imports neither torch nor triton

QHYBRID_DEVICES = ("qhybrid.cpu", "qhybrid.gpu")
GPU_ONLY = frozenset({"qhybrid.gpu", "lightning.gpu", "lightning.tensor"})
_PATTERN = re.compile(r"^local:(?P<provider>[A-Za-z0-9_.-]+)/(?P<name>[A-Za-z0-9_.-]+)$")


@dataclass(frozen=True)
class DeviceSpec:
    """A parsed device string."""

    provider: str
    name: str

    def __str__(self) -> str:
        return f"local:{self.provider}/{self.name}"


@functools.lru_cache(maxsize=1)
def _pennylane_devices() -> tuple[str, ...]:
    """The installed PennyLane device names, scanned once per process: reading every installed
    distribution's entry points costs tens of milliseconds each time."""
    from importlib.metadata import entry_points

    return tuple(sorted({ep.name for ep in entry_points(group="pennylane.plugins")}))


def available_devices() -> dict[str, list[str]]:
    """Return the device names of each provider: ``{"qhybrid": [...], "pennylane": [...]}``."""
    return {"qhybrid": list(QHYBRID_DEVICES), "pennylane": list(_pennylane_devices())}


def _valid_strings(avail: dict[str, list[str]]) -> list[str]:
    return [f"local:{p}/{n}" for p, names in avail.items() for n in names]


def parse_device(s: str | DeviceSpec) -> DeviceSpec:
    """Parse and check a device string.

    Raises:
        DeviceError: for a malformed string or an unknown provider / simulator;
            the message lists the valid ones.
    """
    if isinstance(s, DeviceSpec):
        s = str(s)
    match = _PATTERN.match(s.strip()) if isinstance(s, str) else None
    if match and match["provider"] == "qhybrid" and match["name"] in QHYBRID_DEVICES:
        return DeviceSpec("qhybrid", match["name"])  # our own: no need to scan the PennyLane plugins
    avail = available_devices()
    if not match:
        raise DeviceError(
            f"device {s!r} is not of the form 'local:<provider>/<name>'; valid: {', '.join(_valid_strings(avail))}"
        )
    provider, name = match["provider"], match["name"]
    if provider == "pennylane" and name in MISSING_HINTS and name not in avail["pennylane"]:
        raise DeviceError(f"device {s!r}: {name} is not installed; {MISSING_HINTS[name]}")
    if provider not in avail:
        raise DeviceError(f"unknown device provider {provider!r} in {s!r}; valid providers: {', '.join(avail)}")
    if name not in avail[provider]:
        hint = closest(name, avail[provider])
        more = f"; did you mean {hint[0]!r}?" if hint else ""
        raise DeviceError(
            f"unknown {provider} simulator {name!r} in {s!r}{more} available: {', '.join(avail[provider])}"
        )
    return DeviceSpec(provider, name)


#: What to do about a known PennyLane GPU device that is not installed (one line each).
MISSING_HINTS = {
    "lightning.gpu": "pip install pennylane-lightning-gpu (CUDA 12, a GPU of compute capability 7.0 or newer), "
                     "or use local:qhybrid/qhybrid.gpu",
}

#: Kernel sets a Target names: qhybrid's (:mod:`qhybrid.sim.kernels`: numba on CPU, the torch
#: reference on CPU or CUDA, Triton on CUDA), or a PennyLane device's own simulator.
KERNEL_SETS = ("numba", "torch", "triton", "pennylane")

#: Triton's documented minimum for NVIDIA GPUs (one figure, kept beside the Triton kernels'
#: own status check): older GPUs (the V100 of ml.p3.*, 7.0; the T4, 7.5) run the torch reference.
TRITON_MIN_CAPABILITY = MIN_CAPABILITY


@dataclass(frozen=True)
class Target:
    """A resolved device string: who simulates, where, with which kernels."""

    provider: str
    name: str
    torch_device: str  # "cpu" or "cuda": where qhybrid's tensors live (and a PennyLane GPU device runs)
    needs_gpu: bool
    kernels: str  # one of KERNEL_SETS: the set planned from what is installed (nothing imported)

    @property
    def spec(self) -> DeviceSpec:
        return DeviceSpec(self.provider, self.name)

    def record(self) -> dict:
        """What a JobSpec keeps of the target (JSON): all but the kernel set, which the machine
        that runs the job decides (:meth:`from_record`)."""
        return {"provider": self.provider, "name": self.name, "torch_device": self.torch_device,
                "needs_gpu": self.needs_gpu}

    @classmethod
    def from_record(cls, record: dict) -> "Target":
        """The Target a JobSpec carries, rebuilt without parsing a device string again."""
        spec = DeviceSpec(record["provider"], record["name"])
        return cls(spec.provider, spec.name, record["torch_device"], bool(record["needs_gpu"]), _kernel_set(spec))

    def __str__(self) -> str:
        return str(self.spec)

    def kernel_set(self):
        """The :class:`~qhybrid.sim.kernels.KernelSet` that runs this target, loaded now (imports
        it): :attr:`kernels`, unless it cannot run here (Triton on a GPU below its minimum, or
        not part of this install: the torch reference, see :func:`gpu_kernel_path`).

        Raises:
            DeviceError: a PennyLane device (its own simulator runs it).
        """
        from qhybrid.sim.kernels import get_kernel_set

        if self.kernels == "pennylane":
            raise DeviceError(f"{self} runs on PennyLane's own simulator, not on a qhybrid kernel set")
        if self.kernels == "triton":
            return get_kernel_set(gpu_kernel_path()[0])
        return get_kernel_set(self.kernels)


def _kernel_set(spec: DeviceSpec) -> str:
    if spec.provider != "qhybrid":
        return "pennylane"
    if spec.name == "qhybrid.gpu":
        return "triton" if _triton_installed() else "torch"
    return "numba" if importlib.util.find_spec("numba") is not None else "torch"


def _triton_installed() -> bool:
    """triton and qhybrid's Triton set are both installed (found, nothing imported but the light
    ``qhybrid.sim.kernels`` package)."""
    if importlib.util.find_spec("triton") is None:
        return False
    from qhybrid.sim.kernels import kernel_set_module

    try:
        return importlib.util.find_spec(kernel_set_module("triton")) is not None
    except ModuleNotFoundError:
        return False


def gpu_kernel_path(device_index: int = 0, *, cuda: bool | None = None) -> tuple[str, str]:
    """``(set name, why)``: the kernel set ``qhybrid.gpu`` runs here, ``"triton"`` or ``"torch"``,
    with the reason in words (for ``qhybrid doctor`` / ``qhybrid devices``).

    Args:
        device_index: the CUDA device asked about.
        cuda: whether a GPU is visible, when the caller knows (False answers without importing
            torch or triton); None asks torch.
    """
    minimum = ".".join(map(str, TRITON_MIN_CAPABILITY))
    if importlib.util.find_spec("triton") is None:
        return "torch", "triton is not installed (it comes with CUDA builds of torch)"
    if not _triton_installed():
        return "torch", "qhybrid's Triton kernel set is not part of this install"
    if cuda is False:
        return "torch", f"no CUDA GPU visible; a GPU of compute capability {minimum}+ runs triton"
    from qhybrid.sim.kernels import KernelSetUnavailable, get_kernel_set

    try:
        get_kernel_set("triton")
    except KernelSetUnavailable as e:
        return "torch", str(e)
    import torch

    if not torch.cuda.is_available():
        return "torch", f"no CUDA GPU visible; a GPU of compute capability {minimum}+ runs triton"
    cap = torch.cuda.get_device_capability(device_index)
    gpu = torch.cuda.get_device_name(device_index)
    if tuple(cap) < TRITON_MIN_CAPABILITY:
        return "torch", f"{gpu} has compute capability {cap[0]}.{cap[1]}, below Triton's documented minimum {minimum}"
    return "triton", f"{gpu}, compute capability {cap[0]}.{cap[1]}"


def resolve(device: str | DeviceSpec | Target, *, installed: bool = True) -> Target:
    """Parse and check a device string once, and say how it runs.

    Args:
        device: ``local:<provider>/<name>`` (a Target is returned as it is).
        installed: False to accept a GPU-only PennyLane simulator that is not installed here (the
            estimate models ``lightning.gpu`` on a machine without a GPU).

    Raises:
        DeviceError: as :func:`parse_device`.
    """
    if isinstance(device, Target):
        return device
    try:
        spec = parse_device(device)
    except DeviceError:
        match = _PATTERN.match(device.strip()) if isinstance(device, str) else None
        if installed or not match or match["provider"] != "pennylane" or match["name"] not in GPU_ONLY:
            raise
        spec = DeviceSpec("pennylane", match["name"])
    gpu = spec.name in GPU_ONLY
    return Target(spec.provider, spec.name, "cuda" if gpu else "cpu", gpu, _kernel_set(spec))


def complete(name: str) -> str:
    """The full device string for a bare name (``qhybrid.cpu`` -> ``local:qhybrid/qhybrid.cpu``, any other
    bare name a PennyLane device); a full string is returned stripped. Nothing is checked (:func:`resolve`)."""
    name = name.strip()
    if name.startswith("local:"):
        return name
    return f"local:qhybrid/{name}" if name in QHYBRID_DEVICES else f"local:pennylane/{name}"


def needs_gpu(spec: str | DeviceSpec) -> bool:
    """Return True for devices that only run on a GPU (``qhybrid.gpu``, ``lightning.gpu``, ...)."""
    name = spec.name if isinstance(spec, DeviceSpec) else resolve(spec).name
    return name in GPU_ONLY


def pennylane_device(spec_or_str: str | DeviceSpec, wires, **options):
    """Return ``qml.device(name, wires=wires, **options)`` for a device string.

    Raises:
        DeviceError: for a bad device string.
    """
    spec = parse_device(spec_or_str)
    import pennylane as qml

    return qml.device(spec.name, wires=wires, **options)


def cuda_available() -> bool:
    """Return whether torch sees a CUDA device (imports torch)."""
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:  # pragma: no cover
        return False
