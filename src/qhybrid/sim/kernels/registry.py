"""The kernel sets' registry: name -> the dotted path of its class, imported on first use (so
nothing here imports numba, torch or triton until a set is asked for)."""
from __future__ import annotations

import importlib
import importlib.util





class KernelSetUnavailable(ImportError):
    """A kernel set cannot run here (its package is missing, or no device it runs on)."""


#: name -> "module:Class" (imported on first use).
_REGISTRY: dict[str, str] = {
    "numba": "qhybrid.sim.kernels.numba_set:NumbaKernels",
    "torch": "qhybrid.sim.kernels.torch_set:TorchKernels",
    "triton": "qhybrid.sim.kernels.triton_set:TritonKernels",
}
_INSTANCES: dict = {}  # name -> its KernelSet (base.KernelSet; not imported: base pickles through here)


def register_kernel_set(name: str, path: str) -> None:
    """Register the set ``name`` as ``"package.module:ClassName"`` (imported when first asked for)."""
    if name in _REGISTRY and _REGISTRY[name] != path:
        raise ValueError(f"kernel set {name!r} already registered as {_REGISTRY[name]}")
    _REGISTRY[name] = path


def kernel_set_module(name: str) -> str:
    """The dotted module the set ``name`` is defined in (nothing imported)."""
    return _REGISTRY[name].partition(":")[0]


def kernel_set_names() -> tuple[str, ...]:
    """Every registered set's name (whether or not it can run here)."""
    return tuple(_REGISTRY)


def get_kernel_set(name: str):
    """The registered set ``name`` (one instance per process).

    Raises:
        KeyError: an unknown name (the message lists the registered ones).
        KernelSetUnavailable: the set's package is missing here.
    """
    ks = _INSTANCES.get(name)
    if ks is not None:
        return ks
    if name not in _REGISTRY:
        raise KeyError(f"unknown kernel set {name!r}; registered: {', '.join(_REGISTRY)}")
    module, _, cls = _REGISTRY[name].partition(":")
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name and module.startswith(e.name):
            raise KernelSetUnavailable(f"kernel set {name!r} is not part of this install ({module})") from e
        raise KernelSetUnavailable(f"kernel set {name!r} needs {e.name!r}, which is not installed") from e
    ks = _INSTANCES[name] = getattr(mod, cls)()
    return ks


def available_kernel_sets() -> list[str]:
    """The registered sets that load here (imports each)."""
    out = []
    for name in _REGISTRY:
        try:
            get_kernel_set(name)
        except KernelSetUnavailable:
            continue
        out.append(name)
    return out


def default_kernel_set(device_type: str = "cpu"):
    """The engine's set for tensors on ``device_type`` when the caller names none: numba on CPU
    when installed (a one-line notice on stderr when not), else the torch reference."""
    if device_type == "cpu":
        from qhybrid.sim.jit import HAVE_NUMBA, notice

        if HAVE_NUMBA:
            return get_kernel_set("numba")
        notice()
    return get_kernel_set("torch")


def as_kernel_set(kernels, device_type: str = "cpu"):
    """``kernels`` as a set: a :class:`KernelSet` as is, a name through :func:`get_kernel_set`,
    None as :func:`default_kernel_set` for ``device_type``. A set that cannot take tensors on
    ``device_type`` (numba with CUDA tensors) gives way to the torch reference."""
    if kernels is None:
        return default_kernel_set(device_type)
    ks = get_kernel_set(kernels) if isinstance(kernels, str) else kernels
    return ks if ks.runs_on(device_type) else get_kernel_set("torch")
