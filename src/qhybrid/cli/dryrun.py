"""``--dry-run`` of ``qhybrid qaoa``, ``qml`` and ``run``: the estimate of the job they would submit."""
from __future__ import annotations

import typer


def dry_run(job_kwargs: dict, *, json_output: bool = False, instances=None, gpu: bool = False,
            cpu: bool = False) -> int:
    """Estimate ``Job.create(**job_kwargs)`` and print it (table or JSON); nothing is submitted. Returns 0."""
    from qhybrid.cli import output
    from qhybrid.cli.estimatetable import render
    from qhybrid.estimate import estimate_job, to_json
    from qhybrid.estimate.calibrate import cache_path, cached_calibration

    if cached_calibration() is None:  # on stderr: --json's stdout stays one document
        output.note(f"this machine is not calibrated yet: measuring it once if the estimate needs it "
                    f"(30-60 s on a shared 2-core machine), then cached in {cache_path()}", indent="  ")
    est = estimate_job(job_kwargs, instances=instances, gpu=gpu, cpu=cpu)
    if json_output:
        typer.echo(to_json(est))
    else:
        render(est)
    return 0
