"""The QML job's settings and its checks before training: hyperparameters, the validation
split, the data-parallel division of the batch, and the memory pre-flight (the engine's chunk).

Torch-free, so that the CLI and the pre-flight stay light.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from qhybrid.errors import SpecError

DTYPE_NAMES = ("complex128", "complex64")
DEFAULTS = {"nwires": "10", "ndata": "208", "batch_size": "16", "epochs": "10", "lr": "0.05",
            "gamma": "0.9", "seed": "1967", "dtype": "complex128", "val_fraction": "0.25", "fail_rank": "-1",
            "max_batch_states": "0"}


@dataclass(frozen=True)
class Settings:
    """Validated hyperparameters."""

    nwires: int
    ndata: int
    batch_size: int
    epochs: int
    lr: float
    gamma: float
    seed: int
    dtype: str = "complex128"
    val_fraction: float = 0.25
    fail_rank: int = -1
    max_batch_states: int = 0


def _number(hp: dict, key: str, kind, low, high=None):
    text = str(hp.get(key, DEFAULTS[key]))
    try:
        value = kind(text)
    except ValueError:
        raise SpecError(f"hyperparameter {key}={text!r} is not {'an integer' if kind is int else 'a number'}")
    if value < low or (high is not None and value > high):
        span = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise SpecError(f"hyperparameter {key}={text!r} out of range: must be {span}")
    return value


def parse_settings(hp: dict) -> Settings:
    """Validate the string hyperparameters (defaults in ``DEFAULTS``).

    Keys the runtime adds for Braket compatibility (``sagemaker_*``) are ignored.

    Raises:
        SpecError: naming the bad value and the valid range.
    """
    unknown = sorted(k for k in set(hp) - set(DEFAULTS) if not k.startswith("sagemaker_"))
    if unknown:
        raise SpecError(f"unknown hyperparameter {unknown[0]!r}; valid: {', '.join(DEFAULTS)}")
    dtype = str(hp.get("dtype", DEFAULTS["dtype"]))
    if dtype not in DTYPE_NAMES:
        raise SpecError(f"hyperparameter dtype={dtype!r}: valid are {', '.join(DTYPE_NAMES)}")
    settings = Settings(
        nwires=_number(hp, "nwires", int, 2, 30), ndata=_number(hp, "ndata", int, 1, 208),
        batch_size=_number(hp, "batch_size", int, 1), epochs=_number(hp, "epochs", int, 1),
        lr=_number(hp, "lr", float, 0.0), gamma=_number(hp, "gamma", float, 0.0, 1.0),
        seed=_number(hp, "seed", int, 0), dtype=dtype,
        val_fraction=_number(hp, "val_fraction", float, 0.0, 0.9), fail_rank=_number(hp, "fail_rank", int, -1),
        max_batch_states=_number(hp, "max_batch_states", int, 0),
    )
    if settings.nwires == 3:
        raise SpecError("hyperparameter nwires=3: the range-3 entangling layer would put control and "
                        "target on one wire; use 2 or at least 4 wires")
    return settings


def split(y, val_fraction: float, *, seed: int):
    """A seeded, stratified split: ``(train_index, val_index)`` as sorted lists.

    ``round(val_fraction * len(y))`` samples are held out, shared among the classes in proportion
    to their sizes (largest remainder); within a class they are drawn by a permutation seeded with
    ``seed``.
    """
    import numpy as np

    labels = np.asarray(y)
    classes = sorted(set(labels.tolist()))
    n_val = int(round(val_fraction * len(labels)))
    members = {c: np.flatnonzero(labels == c) for c in classes}
    exact = {c: n_val * len(members[c]) / len(labels) for c in classes}
    take = {c: int(exact[c]) for c in classes}
    for c in sorted(classes, key=lambda c: -(exact[c] - take[c]))[: n_val - sum(take.values())]:
        take[c] += 1
    rng = np.random.default_rng(seed)
    val = sorted(int(i) for c in classes for i in rng.permutation(members[c])[: take[c]])
    held = set(val)
    return [i for i in range(len(labels)) if i not in held], val


def check_world(settings: Settings, world_size: int, n_train: int | None = None) -> int:
    """The local batch size ``batch_size / world_size``.

    Raises:
        SpecError: when ``batch_size`` or the training sample count (``ndata`` less the
            validation share; ``ndata`` when ``n_train`` is not given) is not divisible by
            ``world_size``.
    """
    counts = {"batch_size": settings.batch_size, "ndata": settings.ndata if n_train is None else n_train}
    for key, value in counts.items():
        if value % world_size:
            what = (f"hyperparameter {key}={value}" if key == "batch_size" or n_train is None else
                    f"the {value} training samples (ndata={settings.ndata} less val_fraction="
                    f"{settings.val_fraction:g})")
            raise SpecError(f"{what} is not divisible by the {world_size} "
                            f"data-parallel processes; use a multiple of {world_size}")
    return settings.batch_size // world_size


def memory_share() -> float:
    """This process's share of its machine's free memory: ``1 / LOCAL_WORLD_SIZE`` (the data-parallel
    ranks on one instance each count the memory the others hold)."""
    return 1.0 / max(1, int(os.environ.get("LOCAL_WORLD_SIZE", "1") or 1))


def preflight(settings: Settings, *, device: str = "cpu", kernels: str | None = None, processes: int = 1,
              available: int | None = None) -> int:
    """The QML job's memory check before anything runs: the engine's chunk for a local batch (at
    least one sample's states must fit this process's share of the free memory).

    Args:
        settings: the job's settings.
        device: ``"cpu"`` or a CUDA device name (whose free memory counts).
        kernels: the kernel set's name (``Target.kernels``; None: numba on CPU, else torch).
        processes: processes sharing the device (data-parallel ranks on one instance).
        available: free bytes to use instead of reading the device.

    Returns:
        The samples the engine would simulate at once.

    Raises:
        MemoryLimitError: one line naming the size, the memory one sample needs and what is free.
    """
    from qhybrid.sim import memory

    name = kernels or ("numba" if device == "cpu" else "torch")
    table = memory.QML_STATES_PER_SAMPLE
    states = table.get((name, True), table["torch", True])  # a set without a row: the torch set's
    local = max(1, settings.batch_size // max(1, processes))
    return memory.chunk_size(settings.nwires, batch=local, dtype=settings.dtype,
                             states_per_sample=states, device=device, available=available,
                             max_samples=settings.max_batch_states or None, share=1.0 / max(1, processes))
