"""The instance catalogue (hardware, prices with their kind, source and date) and cost arithmetic.

Hardware comes from the packaged ``data/instances.csv`` (its README says how each
price is known). Only the prices that file knows are known, each with a kind:
``braket`` (a Braket Hybrid Jobs rate), ``sagemaker-training`` (the SageMaker
training rate, which Braket's rates equal) or ``approximate`` (an older table,
shown with ``≈``). Every other price stays unknown (``None``, never zero) unless
the user supplies it in a price file: ``$QHYBRID_PRICES`` or
``$QHYBRID_HOME/prices.toml`` (default ``~/.qhybrid/prices.toml``), kind ``user``::

    [prices]            # USD per minute of one instance
    "ml.c5.xlarge" = 0.0034

Locally an instance type shapes resources: threads = min(vCPUs, local cores),
visible GPUs = min(GPUs, local GPUs).
"""
from __future__ import annotations

import csv
import io
import math
import os
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

from qhybrid.errors import InstanceError, closest


PRICE_KINDS = ("braket", "sagemaker-training", "approximate", "user")


@dataclass(frozen=True)
class Instance:
    """One instance type: hardware, price per minute (None = unknown) and how the price is known.

    Attributes:
        gpu_memory_bandwidth_gbs: the GPU model's memory bandwidth (GB/s, vendor figure).
        cpu_generation: the host CPU generation ("" = unknown).
        cpu_socket_bandwidth_gbs: that generation's peak memory bandwidth per socket (GB/s).
        price_kind: one of PRICE_KINDS, "" when the price is unknown.
        price_date: when the price was seen ("" = not dated).
    """

    type: str
    vcpus: int
    memory_gib: float
    gpus: int
    gpu_model: str = ""
    gpu_memory_gib: float | None = None
    usd_per_minute: float | None = None
    price_source: str = ""
    gpu_memory_bandwidth_gbs: float | None = None
    cpu_generation: str = ""
    cpu_socket_bandwidth_gbs: float | None = None
    price_kind: str = ""
    price_date: str = ""
    note: str = ""

    @property
    def usd_per_second(self) -> float | None:
        return None if self.usd_per_minute is None else self.usd_per_minute / 60.0

    @property
    def approximate(self) -> bool:
        """Whether the price is approximate (costs computed from it are shown with ``≈``)."""
        return self.price_kind == "approximate"


def home() -> Path:
    """Return QHYBRID_HOME (default ``~/.qhybrid``)."""
    return Path(os.environ.get("QHYBRID_HOME") or Path.home() / ".qhybrid")


def price_file() -> Path:
    """Return the user's price file path (it may not exist)."""
    env = os.environ.get("QHYBRID_PRICES")
    return Path(env) if env else home() / "prices.toml"


def _parse_toml(text: str) -> dict:
    try:
        import tomllib

        return tomllib.loads(text)
    except ModuleNotFoundError:  # Python 3.10: the small subset a price file needs
        out: dict = {}
        table = out
        for raw in text.splitlines():
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("[") and line.endswith("]"):
                table = out.setdefault(line[1:-1].strip().strip('"'), {})
                continue
            key, _, value = line.partition("=")
            table[key.strip().strip('"').strip("'")] = float(value.strip())
        return out


def user_prices(valid: set[str] | None = None) -> dict[str, float]:
    """Read the user's price file: ``{instance type: USD per minute}``.

    Raises:
        InstanceError: on an unreadable file, a price that is not a finite number > 0 (NaN, inf, 0,
            a string) or an unknown type.
    """
    path = price_file()
    if not path.is_file():
        return {}
    try:
        table = _parse_toml(path.read_text(encoding="utf-8")).get("prices", {})
    except (ValueError, OSError) as err:
        raise InstanceError(f"price file {path}: {err}") from None
    if not isinstance(table, dict):
        raise InstanceError(f"price file {path}: 'prices' must be a table of instance type = USD per minute "
                            f"(a [prices] section), got {table!r}")
    prices = {}
    for key, value in table.items():
        if valid is not None and key not in valid:
            hint = closest(key, valid)
            raise InstanceError(
                f"price file {path}: unknown instance type {key!r}" + (f"; did you mean {hint[0]!r}?" if hint else "")
            )
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) or value <= 0:
            raise InstanceError(  # a price of 0 would make every cost $0: leave the type out to keep it unknown
                f"price file {path}: price of {key!r} must be a finite number > 0 (USD per minute), got {value!r}; "
                "leave the type out for an unknown price"
            )
        prices[key] = float(value)
    return prices


def _packaged_rows() -> list[dict]:
    text = resources.files("qhybrid").joinpath("data/instances.csv").read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text)))


_CACHE: dict = {}


def catalogue() -> dict[str, Instance]:
    """Return every instance type by name, with user prices applied (re-read when the price file changes)."""
    path = price_file()
    try:
        st = path.stat()
        stamp = (str(path), st.st_mtime_ns, st.st_size)
    except OSError:
        stamp = (str(path), None)
    if _CACHE.get("stamp") != stamp:
        _CACHE["catalogue"] = _build_catalogue()
        _CACHE["stamp"] = stamp
    return dict(_CACHE["catalogue"])


def _number(row: dict, key: str) -> float | None:
    value = (row.get(key) or "").strip()
    return float(value) if value else None


def parse_row(row: dict) -> Instance:
    """One CSV row as an Instance; a blank price is unknown (None), never zero.

    Raises:
        InstanceError: a price without a valid kind, or a kind without a price.
    """
    name = row["instance_type"]
    price = _number(row, "usd_per_minute")
    kind = (row.get("price_kind") or "").strip()
    if (price is None) != (kind == "") or (kind and kind not in PRICE_KINDS):
        raise InstanceError(f"instances.csv row {name!r}: price {price!r} with kind {kind!r}; a price needs "
                            f"a kind among {', '.join(PRICE_KINDS)} and a blank price a blank kind")
    return Instance(
        type=name,
        vcpus=int(row["vcpus"]),
        memory_gib=float(row["memory_gib"]),
        gpus=int(row["gpus"] or 0),
        gpu_model=(row.get("gpu_model") or "").strip(),
        gpu_memory_gib=_number(row, "gpu_memory_gib_each"),
        usd_per_minute=price,
        price_source=(row.get("price_source") or "").strip(),
        gpu_memory_bandwidth_gbs=_number(row, "gpu_memory_bandwidth_gbs"),
        cpu_generation=(row.get("cpu_generation") or "").strip(),
        cpu_socket_bandwidth_gbs=_number(row, "cpu_socket_bandwidth_gbs"),
        price_kind=kind,
        price_date=(row.get("price_date") or "").strip(),
        note=(row.get("note") or "").strip(),
    )


def _build_catalogue() -> dict[str, Instance]:
    out = {row["instance_type"]: parse_row(row) for row in _packaged_rows()}
    for key, value in user_prices(set(out)).items():
        out[key] = replace(out[key], usd_per_minute=value, price_source=f"user ({price_file()})",
                           price_kind="user", price_date="")
    return out


def get_instance(instance_type: str) -> Instance:
    """Return one instance type.

    Raises:
        InstanceError: for a type that is not a name (None, a number), or an unknown one,
            suggesting the nearest names.
    """
    if not isinstance(instance_type, str) or not instance_type.strip():
        raise InstanceError(f"instanceType must be an instance type name like 'ml.m5.large', got {instance_type!r} "
                            "(see `qhybrid instances`)")
    cat = catalogue()
    if instance_type in cat:
        return cat[instance_type]
    hint = closest(str(instance_type), cat, n=3)
    more = f"; did you mean {', '.join(repr(h) for h in hint)}?" if hint else ""
    raise InstanceError(
        f"unknown instance type {instance_type!r}{more} (see `qhybrid instances` for all {len(cat)})"
    )


def cost(billed_seconds: float, instance: Instance, count: int = 1) -> float | None:
    """Return the cost in USD of ``count`` instances for ``billed_seconds`` (None if the price is unknown)."""
    if instance.usd_per_second is None:
        return None
    return billed_seconds * count * instance.usd_per_second


def costs_elsewhere(billed_seconds: float, count: int = 1) -> dict[str, float]:
    """Return what the same run would cost on each priced instance type if it took as long there.

    Equal duration is a crude assumption; :func:`qhybrid.estimate.costs_on_instances` uses the model.
    """
    return {
        name: cost(billed_seconds, inst, count)
        for name, inst in sorted(catalogue().items())
        if inst.usd_per_minute is not None
    }


def local_cores() -> int:
    """Return the CPU cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def threads_for(instance: Instance, processes: int = 1, count: int = 1) -> int:
    """Threads per process: the instance's vCPUs (times count) capped by local cores, shared by processes."""
    return max(1, min(instance.vcpus * count, local_cores()) // max(1, processes))


def format_price(inst: Instance) -> str:
    """USD per minute, ``≈`` before an approximate one, ``unknown`` when unknown."""
    if inst.usd_per_minute is None:
        return "unknown"
    return ("≈" if inst.approximate else "") + f"{inst.usd_per_minute:.5f}"


def format_usd(value: float | None, approximate: bool = False) -> str:
    """``$0.0123`` (``≈$0.0123`` from an approximate price); ``unknown (no price)`` for None."""
    if value is None:
        return "unknown (no price)"
    mark = "≈" if approximate else ""
    return mark + (f"${value:.6f}" if value < 0.01 else f"${value:.4f}")


def ceil_seconds(seconds: float) -> int:
    return int(math.ceil(max(0.0, seconds)))
