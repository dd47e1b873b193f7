"""``--dry-run`` of ``qhybrid qaoa``, ``qml`` and ``run``: the estimate of the job they would submit."""
from __future__ import annotations

import typer


def dry_run(job_kwargs: dict, *, json_output: bool = False, instances=None, gpu: bool = False,
            cpu: bool = False) -> int:
    """Estimate ``Job.create(**job_kwargs)`` and print it (table or JSON); nothing is submitted. Returns 0.

    The spec is built as the submission would build it (its checks included), then estimated with its
    Target and the workload's parsed settings (``estimate.predict.estimate_spec``).
    """
    from qhybrid.cli import output
    from qhybrid.cli.estimatetable import render
    from qhybrid.estimate import to_json
    from qhybrid.estimate.calibrate import cache_path, cached_calibration
    from qhybrid.estimate.predict import estimate_spec, spec_of
    from qhybrid.workloads.table import settings_of

    spec, target = spec_of(job_kwargs)
    workload, settings = settings_of(spec)
    if cached_calibration() is None:  # on stderr: --json's stdout stays one document
        output.note(f"this machine is not calibrated yet: measuring it once if the estimate needs it "
                    f"(30-60 s on a shared 2-core machine), then cached in {cache_path()}", indent="  ")
    est = estimate_spec(spec, target=target, workload=workload, settings=settings,
                        processes_per_instance=job_kwargs.get("processes_per_instance"), instances=instances,
                        gpu=gpu, cpu=cpu)
    if json_output:
        typer.echo(to_json(est))
    else:
        render(est)
    return 0
