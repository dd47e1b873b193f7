"""SubmitOptions: the keywords every way of submitting a job shares, written once.

``Job.create``, ``@hybrid_job``, ``qhybrid.braket.AwsQuantumJob.create`` and
``LocalQuantumJob.create`` all take these keywords (the Braket launchers under
Braket's own names, translated into them); each builds one ``SubmitOptions``
and hands it on, so a keyword's meaning and default live here only.

Example:
    >>> opts = SubmitOptions.of(max_runtime=600, tags={"study": "a"})
    >>> replace(opts, max_cost=0.5).max_cost
    0.5
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace  # noqa: F401  (replace: for callers)
from typing import Any

from qhybrid.errors import SpecError
from qhybrid.errors import closest

LAUNCH_MODES = ("exec", "fork")


@dataclass(frozen=True)
class SubmitOptions:
    """How a job is submitted, beyond its device, source and entry point.

    Args:
        job_name: letters, digits, hyphens, <= 50 chars, unique; generated if None.
        hyperparameters: JSON-serializable dict; the script sees string values.
        input_data: a path (channel ``input``) or ``{channel: path}``.
        instance_config: an InstanceConfig (default ml.m5.large x 1).
        copy_checkpoints_from_job: name of an earlier job whose checkpoints are copied in.
        distribution: None or ``"data_parallel"``.
        max_runtime: seconds before the job is stopped (FAILED).
        max_cost: USD; the job is stopped (FAILED) when its estimated cost reaches it.
        wait_until_complete: wait for the end (streaming logs) before returning.
        backend: ``"local"`` (``"ray"`` when installed).
        processes_per_instance: data-parallel processes per instance on CPU (default 1).
        in_process: run the script in this interpreter (tests, debugging); returns when done.
        address: with ``backend="ray"``, the Ray cluster (``HOST:PORT``, ``auto``,
            ``ray://HOST:10001``); None: ``$QHYBRID_RAY_ADDRESS``, ``$RAY_ADDRESS``,
            else a local cluster on 127.0.0.1 (docs/ray.md).
        force: submit even when the predicted cost exceeds ``max_cost`` (the job is still
            stopped when its running cost reaches it).
        tags: ``{str: str}`` stored with the job (``jobs show``, ``jobs list --tag``).
        launch: how the detached supervisor starts: ``"exec"``, a fresh interpreter (default),
            or ``"fork"``, a copy of this process, which saves an interpreter's start-up: for a
            plain single-purpose caller such as the ``qhybrid`` command, never one holding
            threads, locks or a GPU (``qhybrid.jobs.launch``; local backend, Linux only).
        extra: qhybrid's own additions to the spec (the ``@hybrid_job`` call, Braket's
            AWS-only settings, ...); not for users.

    Raises:
        SpecError: for an unknown ``launch`` mode (every other value is checked with the spec).
    """

    job_name: str | None = None
    hyperparameters: dict | None = None
    input_data: Any = None
    instance_config: Any = None
    copy_checkpoints_from_job: str | None = None
    distribution: str | None = None
    max_runtime: float | None = None
    max_cost: float | None = None
    wait_until_complete: bool = False
    backend: str = "local"
    processes_per_instance: int | None = None
    in_process: bool = False
    address: str | None = None
    force: bool = False
    tags: dict | None = None
    launch: str = "exec"
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.launch not in LAUNCH_MODES:
            raise SpecError(f"launch={self.launch!r}: valid are {', '.join(map(repr, LAUNCH_MODES))}")

    @classmethod
    def of(cls, options: "SubmitOptions | None" = None, /, **keywords) -> "SubmitOptions":
        """Return ``options`` (default: all defaults) with ``keywords`` applied.

        ``_extra`` is accepted as the old spelling of ``extra``.

        Raises:
            SpecError: for a keyword that is not a submit option (naming the closest valid one).
        """
        if "_extra" in keywords:
            keywords["extra"] = keywords.pop("_extra")
        if keywords.get("extra") is None:
            keywords.pop("extra", None)
        unknown = sorted(set(keywords) - NAMES)
        if unknown:
            hint = closest(unknown[0], sorted(NAMES))
            more = f" (did you mean {hint[0]!r}?)" if hint else ""
            raise SpecError(f"unknown submit option {unknown[0]!r}{more}; valid: {', '.join(sorted(NAMES))}")
        base = options if options is not None else cls()
        return replace(base, **keywords) if keywords else base

    def spec_fields(self) -> dict[str, Any]:
        """The keywords of ``jobs.spec.build_spec`` these options fill (everything but how to submit)."""
        return {"job_name": self.job_name, "hyperparameters": self.hyperparameters, "input_data": self.input_data,
                "instance_config": self.instance_config, "copy_checkpoints_from_job": self.copy_checkpoints_from_job,
                "distribution": self.distribution, "max_runtime": self.max_runtime, "max_cost": self.max_cost,
                "backend": self.backend, "processes_per_instance": self.processes_per_instance,
                "in_process": self.in_process, "extra": dict(self.extra), "address": self.address,
                "tags": self.tags}


NAMES = frozenset(f.name for f in fields(SubmitOptions))
