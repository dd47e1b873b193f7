"""JobSpec and InstanceConfig: every check on a job happens here, before anything is written."""
from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from qhybrid.devices import Target, local_gpus, resolve
from qhybrid.errors import InstanceError, SpecError
from qhybrid.jobs import contract, environments, instances
from qhybrid.jobs.channels import COPY_IGNORE, check_room, measure
from qhybrid.jobs.entry_point import resolve_entry_point  # noqa: F401  (re-exported: its old home)

NAME_RE = contract.NAME_RE
MAX_NAME = 50
MAX_HYPERPARAMETER_BYTES = 1 << 20  # 1 MiB of JSON in all; hyperparameters are settings, data goes in input_data
MAX_INSTANCE_COUNT = 1000
DISTRIBUTIONS = (None, "data_parallel")
BACKENDS = ("local", "ray")
NO_DEVICE = "local:none/none"  # what Braket passes for device=None
_ARN_RE = re.compile(r"^arn:aws[a-z-]*:braket:[a-z0-9-]*:\d*:device/[A-Za-z0-9_./-]+$")
_JOB_REF_RE = re.compile(r"^(?:local:job/|arn:[A-Za-z0-9-]+:braket:[a-z0-9-]*:\d*:job/)(?P<name>.+)$")


@dataclass(frozen=True)
class InstanceConfig:
    """The instance a job asks for (Braket's keyword names).

    Example:
        >>> InstanceConfig(instanceType="ml.m5.2xlarge", instanceCount=2)  # doctest: +SKIP
    """

    instanceType: str = "ml.m5.large"
    instanceCount: int = 1
    volumeSizeInGb: int = 30

    def __post_init__(self):
        instances.get_instance(self.instanceType)
        for key in ("instanceCount", "volumeSizeInGb"):
            value = getattr(self, key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InstanceError(f"{key} must be an integer >= 1, got {value!r}")
        if self.instanceCount > MAX_INSTANCE_COUNT:
            raise InstanceError(f"instanceCount must be at most {MAX_INSTANCE_COUNT}, got {self.instanceCount!r}")


@dataclass(frozen=True)
class JobSpec:
    """A validated job: what the store writes to ``spec.json`` and the supervisor runs."""

    name: str
    device: str
    source: str  # absolute path of the file or package folder (snapshotted into source/)
    entry_point: str  # "pkg.module" or "pkg.module:function"
    hyperparameters: dict[str, str] = field(default_factory=dict)
    input_data: dict[str, str] = field(default_factory=dict)  # channel -> absolute path
    instance_type: str = "ml.m5.large"
    instance_count: int = 1
    copy_checkpoints_from_job: str | None = None
    distribution: str | None = None
    processes_per_instance: int = 1
    max_runtime: float | None = None
    max_cost: float | None = None
    backend: str = "local"
    in_process: bool = False
    created: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. the hybrid_job call
    # the instance type's hardware and price, frozen at submission (an edited prices.toml never
    # changes a job that was already submitted)
    instance: dict[str, Any] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    # the device resolved once at submission (``devices.Target.record``); empty for a device
    # passed through to the script unchecked, and for specs older than this field
    device_target: dict[str, Any] = field(default_factory=dict)

    def target(self) -> Target | None:
        """The resolved device this job runs on (None: passed through to the script unchecked)."""
        if self.device_target:
            return Target.from_record(self.device_target)
        return None if passes_through(self.device) else resolve(self.device)  # a spec from before targets

    @property
    def world_size(self) -> int:
        return self.instance_count * self.processes_per_instance if self.distribution else 1

    def frozen_instance(self) -> instances.Instance:
        """The instance type as it was at submission (the catalogue's, for specs older than that)."""
        if self.instance:
            return instances.Instance(**self.instance)
        return instances.get_instance(self.instance_type)

    def budget_seconds(self) -> int | None:
        """Whole seconds the job may be billed within ``max_cost`` (None without a budget or price)."""
        inst = self.frozen_instance()
        if self.max_cost is None or not inst.usd_per_second:
            return None
        return int(math.floor(self.max_cost / (inst.usd_per_second * self.instance_count) + 1e-9))

    def to_json(self) -> str:
        """spec.json: everything but the hyperparameters, which live once, in hyperparameters.json."""
        return json.dumps({**asdict(self), "hyperparameters": {}}, indent=2)

    @classmethod
    def from_json(cls, text: str) -> "JobSpec":
        doc = json.loads(text)
        if not isinstance(doc, dict):
            raise ValueError("spec.json is not a JSON object")
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in doc.items() if k in known})


def check_name(name: str) -> str:
    """Return a valid job name or raise SpecError (letters, digits, hyphens, <= 50 chars)."""
    if not contract.is_job_name(name):
        raise SpecError(
            f"invalid job name {name!r}: use 1-{MAX_NAME} letters, digits and inner hyphens (e.g. 'qaoa-run-1')"
        )
    return name


def job_ref_name(ref: str) -> str:
    """Return the job name in ``ref``: a name, a local ARN ``local:job/NAME`` or a Braket job ARN."""
    match = _JOB_REF_RE.match(ref) if isinstance(ref, str) else None
    return check_name(match["name"] if match else ref)


def passes_through(device: str) -> bool:
    """True for a device string qhybrid hands to the script unchecked: ``local:none/none`` (None),
    ``local:braket/<name>`` and Braket device ARNs."""
    return device == NO_DEVICE or (device.startswith("local:braket/") and len(device) > 13) or bool(_ARN_RE.match(device))


def check_device(device) -> tuple[str, Target | None]:
    """Return ``(device string, its Target)``; Braket's pass-through strings are kept as they are
    (their Target None).

    ``None`` (as ``local:none/none``), ``local:braket/<name>`` and device ARNs reach the script
    unchanged; ``local:qhybrid/...``, ``local:pennylane/...`` and anything else are checked
    strictly (``parse_device``).

    Raises:
        DeviceError: for a malformed or unknown device string.
    """
    device = getattr(device, "value", device)  # Braket's device enums (Devices.Amazon.SV1) hold the ARN
    if device is None or device == NO_DEVICE:
        return NO_DEVICE, None
    if not isinstance(device, str):
        raise SpecError(f"device must be a string like 'local:qhybrid/qhybrid.cpu' (or None), got {device!r}")
    if passes_through(device):
        return device, None
    target = resolve(device)
    return str(target), target


def check_tags(tags) -> dict[str, str]:
    """Return tags as ``{str: str}`` (Braket's job tags)."""
    if tags is None:
        return {}
    if not isinstance(tags, dict):
        raise SpecError(f"tags must be a dict of str -> str, got {type(tags).__name__}")
    bad = [k for k, v in tags.items() if not isinstance(k, str) or not k or not isinstance(v, str)]
    if bad:
        raise SpecError(f"tags must map non-empty strings to strings; bad key(s): {', '.join(map(repr, bad))}")
    return dict(tags)


def generate_name(source: Path) -> str:
    """Return ``qhybrid-<script>-<ms timestamp>`` (trimmed to 50 characters)."""
    stem = re.sub(r"[^A-Za-z0-9]+", "-", source.stem if source.is_file() else source.name).strip("-") or "job"
    stamp = str(int(time.time() * 1000))
    stem = stem[: MAX_NAME - len("qhybrid--") - len(stamp)].strip("-") or "job"
    return f"qhybrid-{stem}-{stamp}"


def check_hyperparameters(hp: dict | None) -> dict[str, str]:
    """Return hyperparameters stringified as Braket does (``str(key): str(value)``, any value)."""
    if hp is None:
        return {}
    if not isinstance(hp, dict):
        raise SpecError(f"hyperparameters must be a dict, got {type(hp).__name__}")
    out = {str(k): str(v) for k, v in hp.items()}  # as Braket: every value becomes its string
    size = len(json.dumps(out).encode("utf-8"))
    if size > MAX_HYPERPARAMETER_BYTES:
        raise SpecError(
            f"hyperparameters take {size:,} bytes as JSON, more than the {MAX_HYPERPARAMETER_BYTES:,} allowed; "
            "pass data through input_data instead"
        )
    return out


def check_input_data(input_data) -> dict[str, str]:
    """Return ``{channel: absolute path}``; a plain path is the channel ``input``.

    Each channel must be a regular file or a folder of them (see ``channels.check_tree``).
    """
    if input_data is None:
        return {}
    if isinstance(input_data, (str, os.PathLike)):
        input_data = {"input": input_data}
    if not isinstance(input_data, dict):
        raise SpecError(f"input_data must be a path or a dict of channel -> path, got {type(input_data).__name__}")
    out = {}
    for channel, path in input_data.items():
        if not isinstance(channel, str) or not contract.CHANNEL_RE.fullmatch(channel):
            raise SpecError(f"invalid input channel name {channel!r}: use letters, digits, '-', '_', '.' (up to 64)")
        if not isinstance(path, (str, os.PathLike)):
            raise SpecError(f"input path for channel {channel!r} must be a path, got {path!r}")
        p = Path(path).expanduser()
        if not p.exists():
            raise SpecError(f"input path {str(path)!r} for channel {channel!r} does not exist")
        out[channel] = str(p.resolve())
    return out


def _positive(name: str, value, cast=float):
    """A positive finite number (int for ``cast=int``: no floats, no bools), or None."""
    if value is None:
        return None
    if isinstance(value, bool) or (cast is int and not isinstance(value, int)):
        kind = "a positive integer" if cast is int else "a positive number"
        raise SpecError(f"{name} must be {kind}, got {value!r}")
    try:
        v = cast(value)
    except (TypeError, ValueError, OverflowError):
        raise SpecError(f"{name} must be a positive number, got {value!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise SpecError(f"{name} must be a positive finite number, got {value!r}")
    return v


def _frozen_instance(inst: instances.Instance) -> dict:
    price = inst.usd_per_minute
    if price is not None and (not isinstance(price, (int, float)) or not math.isfinite(price) or price <= 0):
        raise InstanceError(
            f"price of {inst.type!r} is {price!r} USD per minute ({inst.price_source}); "
            f"a price must be a positive finite number: fix {instances.price_file()}"
        )
    return asdict(inst)


def build_spec(
    *, device: str, source_module, entry_point: str | None = None, job_name: str | None = None,
    hyperparameters: dict | None = None, input_data=None, instance_config: InstanceConfig | None = None,
    copy_checkpoints_from_job: str | None = None, distribution: str | None = None, max_runtime: float | None = None,
    max_cost: float | None = None, backend: str = "local", processes_per_instance: int | None = None,
    in_process: bool = False, extra: dict | None = None, address: str | None = None, tags: dict | None = None,
) -> JobSpec:
    """Validate every argument of ``Job.create`` and return a JobSpec (no side effects).

    Raises:
        SpecError, InstanceError, DeviceError: one line naming the bad value.
    """
    dev, target = check_device(device)
    source = _check_source(source_module)
    entry = resolve_entry_point(source, entry_point)
    hp = check_hyperparameters(hyperparameters)
    channels = check_input_data(input_data)
    ic, inst = _check_instance(instance_config, dev, target)
    if distribution not in DISTRIBUTIONS:
        raise SpecError(f"distribution {distribution!r} is not one of None, 'data_parallel'")
    extra = _check_backend(backend, address, extra)
    ppi = _processes(processes_per_instance, distribution=distribution, inst=inst, in_process=in_process)
    runtime = _positive("max_runtime", max_runtime) or contract.DEFAULT_MAX_RUNTIME_S  # Braket's 5 days
    budget, frozen = _check_budget(max_cost, inst, ic)
    if copy_checkpoints_from_job is not None:
        copy_checkpoints_from_job = job_ref_name(copy_checkpoints_from_job)
    job_tags = check_tags(tags)
    extra = environments.attach(source, extra)  # requirements.txt in the source: the job's own environment
    if distribution == "data_parallel":
        hp = {**hp, "sagemaker_distributed_dataparallel_enabled": "true", "sagemaker_instance_type": ic.instanceType}
    name = check_name(job_name) if job_name is not None else generate_name(source)
    _check_room_for(source, channels)
    spec = JobSpec(
        name=name,
        device=dev,
        source=str(source),
        entry_point=entry,
        hyperparameters=hp,
        input_data=channels,
        instance_type=ic.instanceType,
        instance_count=ic.instanceCount,
        copy_checkpoints_from_job=copy_checkpoints_from_job,
        distribution=distribution,
        processes_per_instance=ppi,
        max_runtime=runtime,
        max_cost=budget,
        backend=backend,
        in_process=bool(in_process),
        created=time.time(),
        extra=dict(extra or {}),
        instance=frozen,
        tags=job_tags,
        device_target=target.record() if target is not None else {},
    )
    return spec


def _check_room_for(source: Path, channels: dict[str, str]) -> None:
    """The source and the input channels fit in the job store, as copies (``channels.check_room``)."""
    total = measure(source, what="source_module", ignore=COPY_IGNORE)
    total += sum(measure(Path(path), what=f"input channel {channel!r}") for channel, path in channels.items())
    check_room(total)


def _check_source(source_module) -> Path:
    """The absolute path of an existing ``.py`` file or package folder."""
    if not isinstance(source_module, (str, os.PathLike)):
        raise SpecError(f"source_module must be a path to a .py file or a package folder, got {source_module!r}")
    source = Path(source_module).expanduser()
    if not source.exists():
        raise SpecError(f"source module {str(source_module)!r} does not exist (give a .py file or a package folder)")
    source = source.resolve()
    if source.is_file() and source.suffix != ".py":
        raise SpecError(f"source module {str(source_module)!r} is not a .py file or a folder")
    return source


def _check_instance(instance_config, dev: str, target: Target | None) -> tuple[InstanceConfig, instances.Instance]:
    """The InstanceConfig (also from the Braket SDK's own) and its catalogue entry; a GPU for a GPU device."""
    ic = instance_config or InstanceConfig()
    if not isinstance(ic, InstanceConfig) and hasattr(ic, "instanceType"):  # e.g. the Braket SDK's own
        ic = InstanceConfig(instanceType=ic.instanceType, instanceCount=getattr(ic, "instanceCount", 1),
                            volumeSizeInGb=getattr(ic, "volumeSizeInGb", 30))
    if not isinstance(ic, InstanceConfig):
        raise SpecError(f"instance_config must be an InstanceConfig, got {type(ic).__name__}")
    inst = instances.get_instance(ic.instanceType)
    if target is not None and target.needs_gpu and inst.gpus == 0:
        gpu_types = [n for n, i in instances.catalogue().items() if i.gpus and i.usd_per_minute is not None]
        raise InstanceError(
            f"device {dev} needs a GPU but instance type {ic.instanceType!r} has none; "
            f"use a GPU instance such as {', '.join(gpu_types[:3]) or 'ml.p3.2xlarge'}"
        )
    return ic, inst


def _check_backend(backend: str, address: str | None, extra: dict | None) -> dict | None:
    """Refuse an unknown or missing backend, and an address without Ray; return ``extra`` with the address."""
    if backend not in BACKENDS:
        raise SpecError(f"backend {backend!r} is not one of {', '.join(BACKENDS)}")
    if importlib.util.find_spec(f"qhybrid.jobs.backends.{backend}") is None:
        raise SpecError(f"backend {backend!r} is not available in this installation; use 'local'")
    if address is not None:  # the Ray cluster to run on (docs/ray.md)
        if backend != "ray":
            raise SpecError(f"address {address!r} needs backend='ray' (got backend={backend!r})")
        if not isinstance(address, str) or not address.strip():
            raise SpecError(f"address {address!r} is not HOST:PORT, 'auto' or 'ray://HOST:PORT'")
        extra = {**(extra or {}), "ray_address": address.strip()}
    return extra


def _processes(processes_per_instance, *, distribution: str | None, inst: instances.Instance,
               in_process: bool) -> int:
    """Processes per instance: as given (data-parallel only), else one per local GPU of the type, else 1."""
    ppi = _positive("processes_per_instance", processes_per_instance, int)
    if ppi is None:
        ppi = min(inst.gpus, local_gpus()) if (distribution and inst.gpus) else 1
        ppi = max(1, ppi)
    if distribution is None and processes_per_instance not in (None, 1):
        raise SpecError("processes_per_instance needs distribution='data_parallel'")
    if in_process and distribution:
        raise SpecError("in_process runs one process in this interpreter; drop distribution='data_parallel'")
    return ppi


def _check_budget(max_cost, inst: instances.Instance, ic: InstanceConfig) -> tuple[float | None, dict]:
    """The budget (a price is needed, and at least one billed second) and the instance frozen for the spec."""
    budget = _positive("max_cost", max_cost)
    frozen = _frozen_instance(inst)
    if budget is not None and inst.usd_per_minute is None:
        raise SpecError(
            f"max_cost needs a price for {ic.instanceType!r}, which is unknown; "
            f"add it to {instances.price_file()} ([prices] \"{ic.instanceType}\" = USD per minute)"
        )
    if budget is not None and budget < inst.usd_per_second * ic.instanceCount:
        raise SpecError(
            f"max_cost of ${budget:g} is less than one billed second of {ic.instanceCount} x {ic.instanceType} "
            f"(${inst.usd_per_second * ic.instanceCount:.6f}); raise it"
        )
    return budget, frozen
