"""Device strings ``local:<provider>/<name>`` -> a simulator.

Providers:
- ``qhybrid``: our engine, ``qhybrid.cpu`` and ``qhybrid.gpu``;
- ``pennylane``: any installed PennyLane device (read from the
  ``pennylane.plugins`` entry points, nothing imported).

``resolve(device_string)`` answers everything a caller decides from a device string,
once: a :class:`Target` (provider, name, torch device, whether it needs a GPU, the
kernel set that will run: its name, and ``Target.kernel_set()`` the loaded set, imported
only when asked for). ``parse_device`` and ``needs_gpu`` are thin views of it.

Whether this machine has a CUDA GPU is asked here too, and only here: without importing torch
(:func:`cuda_expected`, :func:`local_gpus`: the NVIDIA driver) or from torch (:func:`require_cuda`,
:func:`torch_device`, :func:`cuda_device_count`); and which kernel set ``qhybrid.gpu`` runs on
it, with the reason in words (:func:`gpu_kernel_path`).

Example:
    >>> parse_device("local:pennylane/lightning.qubit")
    DeviceSpec(provider='pennylane', name='lightning.qubit')
    >>> resolve("local:qhybrid/qhybrid.gpu").torch_device
    'cuda'
"""
from __future__ import annotations

import functools
import importlib.util
import os
import re
from dataclasses import dataclass
from pathlib import Path

from qhybrid.errors import DeviceError, closest
from qhybrid.sim.triton.status import MIN_CAPABILITY, capability_path  # imports neither torch nor triton

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
    if not cuda_available():
        return "torch", f"no CUDA GPU visible; a GPU of compute capability {minimum}+ runs triton"
    import torch

    return capability_path(torch.cuda.get_device_capability(device_index), torch.cuda.get_device_name(device_index))


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


# -- CUDA here: the one place that asks whether this machine has a GPU ---------------------------
NVIDIA_DRIVER = Path("/proc/driver/nvidia")  # the driver's view: one folder per GPU under gpus/
DEVICE_FILES = Path("/dev")  # /dev/nvidia0, /dev/nvidia1, ...


def local_gpus() -> int:
    """Return the number of local NVIDIA GPUs the driver reports (and CUDA_VISIBLE_DEVICES leaves
    visible), without importing torch: a look at ``NVIDIA_DRIVER`` / ``DEVICE_FILES``."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    proc = NVIDIA_DRIVER / "gpus"
    if proc.is_dir():
        found = len(list(proc.iterdir()))
    else:  # containers may lack /proc/driver/nvidia but still have the device files
        found = len([p for p in DEVICE_FILES.glob("nvidia*") if re.fullmatch(r"nvidia\d+", p.name)])
    if visible is not None:
        ids = [v for v in re.split(r"[,\s]+", visible) if v and v != "-1"]
        return min(found, len(ids)) if found else 0
    return found


def torch_build() -> str | None:
    """The installed torch's version (``2.13.0+cpu``, ``2.13.0+cu128``) from its metadata, None
    without torch; torch is not imported."""
    from importlib import metadata

    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None


def cuda_expected() -> bool:
    """Whether CUDA should be there, without importing torch (a second or more): the NVIDIA driver
    reports a visible GPU (:func:`local_gpus`) and torch is not a CPU-only wheel. A job on a GPU
    device asks torch itself (:func:`require_cuda`) and fails in one line when torch disagrees."""
    if local_gpus() == 0:
        return False
    version = torch_build()
    return version is not None and "+cpu" not in version


def cuda_available() -> bool:
    """Return whether torch sees a CUDA device (imports torch)."""
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:  # pragma: no cover
        return False


def require_cuda(what: str, instead: str) -> None:
    """Check that torch sees a CUDA device (imports torch).

    Args:
        what: what needs it, as the message starts (``"device local:qhybrid/qhybrid.gpu"``).
        instead: what to use without a GPU (``"local:qhybrid/qhybrid.cpu"``).

    Raises:
        DeviceError: no CUDA device; one line naming ``what``, the torch build and ``instead``.
    """
    if not cuda_available():
        raise DeviceError(f"{what} needs a CUDA GPU, which torch {torch_build() or '(not installed)'} "
                          f"does not see here; use {instead}")


def cuda_device_count() -> int:
    """The CUDA devices torch sees, 0 without CUDA (imports torch)."""
    if not cuda_available():
        return 0
    import torch

    return int(torch.cuda.device_count())


def torch_device(target: Target, *, instead: str = "local:qhybrid/qhybrid.cpu"):
    """The ``torch.device`` a target's tensors live on: the current CUDA device for a target that
    needs a GPU, else the CPU (imports torch).

    Raises:
        DeviceError: a GPU target without CUDA (:func:`require_cuda`).
    """
    import torch

    if not target.needs_gpu:
        return torch.device("cpu")
    require_cuda(f"device {target}", instead)
    return torch.device("cuda", torch.cuda.current_device())


def torch_gpus() -> list[str]:
    """The CUDA GPUs torch sees, ``"<name> (CUDA <version>)"`` each; empty without torch, with a
    CPU-only build of it (then torch is not imported) or without a GPU."""
    build = torch_build()
    if build is None or "+cpu" in build or not cuda_available():
        return []
    import torch

    return [f"{torch.cuda.get_device_name(i)} (CUDA {torch.version.cuda})" for i in range(torch.cuda.device_count())]
