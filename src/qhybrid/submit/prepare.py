"""From submit keywords to a checked JobSpec and its resolved Target, before anything is written."""
from __future__ import annotations

from qhybrid.devices import Target
from qhybrid.errors import SpecError
from qhybrid.jobs import store
from qhybrid.jobs.backends import get_backend
from qhybrid.jobs.spec import JobSpec, build_spec
from qhybrid.submit import preflight
from qhybrid.submit.options import SubmitOptions


def prepare(*, device, source_module, entry_point: str | None,
            options: SubmitOptions) -> tuple[JobSpec, Target | None]:
    """Build the spec (its device resolved once, into the Target it carries), check it against its
    backend and run the pre-flight.

    Returns:
        ``(spec, target)``; ``target`` is None for a device passed through to the script unchecked
        (``None``, ``local:braket/...``, Braket device ARNs).

    Raises:
        SpecError, InstanceError, DeviceError, ClusterError, MemoryLimitError: one line; nothing is written.
    """
    spec = build_spec(device=device, source_module=source_module, entry_point=entry_point, **options.spec_fields())
    target = spec.target()
    get_backend(spec.backend).check(spec)
    preflight.check(spec, target)
    if spec.copy_checkpoints_from_job and not store.job_dir(spec.copy_checkpoints_from_job).is_dir():
        raise SpecError(f"copy_checkpoints_from_job: no job named {spec.copy_checkpoints_from_job!r}")
    if spec.backend == "ray" and not spec.in_process:
        from qhybrid.jobs.backends.ray import check_submission  # start-up: ray's modules only for a ray job

        check_submission(spec)  # ClusterError now (unreachable, can never fit), before anything is written
    return spec, target
