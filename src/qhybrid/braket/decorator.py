"""``hybrid_job`` with every keyword of Braket's decorator, over ``qhybrid.submit.decorator``.

Calling the decorated function returns an ``AwsQuantumJob`` (``local=True``: a
``LocalQuantumJob``, already finished, its log streamed).

Example:
    >>> @hybrid_job(device="local:pennylane/lightning.qubit", data_format="pickle")  # doctest: +SKIP
    ... def rotate(num_steps=10, stepsize=0.5):
    ...     ...
    >>> rotate(num_steps=3).result(allow_pickle=True)                                # doctest: +SKIP
"""
from __future__ import annotations

from qhybrid.braket.quantum_job import AwsQuantumJob, LocalQuantumJob
from qhybrid.submit import decorator as _core


def hybrid_job(
    *,
    device: str | None,
    include_modules=None,
    dependencies=None,
    local: bool = False,
    job_name: str | None = None,
    image_uri: str | None = None,
    input_data=None,
    wait_until_complete: bool = False,
    instance_config=None,
    distribution: str | None = None,
    copy_checkpoints_from_job: str | None = None,
    checkpoint_config=None,
    role_arn: str | None = None,
    stopping_condition=None,
    output_data_config=None,
    aws_session=None,
    tags: dict[str, str] | None = None,
    logger=None,
    quiet: bool | None = None,
    reservation_arn: str | None = None,
    data_format="plaintext",
    **qhybrid_options,
):
    """Decorate a function so that calling it creates a Braket-style job running it (by value).

    Args: as Braket's ``hybrid_job``; ``qhybrid_options`` are ``Job.create``'s own keywords
    (``max_cost``, ``processes_per_instance``, ``in_process``, ``backend``, ...).

    Raises:
        SpecError: for a bad data format, an unimportable module or a bad dependencies value.
    """
    braket = dict(
        image_uri=image_uri, instance_config=instance_config, distribution=distribution,
        copy_checkpoints_from_job=copy_checkpoints_from_job, checkpoint_config=checkpoint_config,
        role_arn=role_arn, stopping_condition=stopping_condition, output_data_config=output_data_config,
        aws_session=aws_session, tags=tags, logger=logger, quiet=bool(quiet), reservation_arn=reservation_arn,
    )

    def submit(*, device, source_module, entry_point, options):
        kwargs = dict(device=device, source_module=source_module, entry_point=entry_point,
                      job_name=options.job_name, hyperparameters=options.hyperparameters,
                      input_data=options.input_data)
        if local:
            return LocalQuantumJob.create(**kwargs, **braket, **qhybrid_options)
        return AwsQuantumJob.create(**kwargs, wait_until_complete=wait_until_complete, **braket, **qhybrid_options)

    return _core.hybrid_job(
        device=device, include_modules=include_modules, dependencies=dependencies, job_name=job_name,
        input_data=input_data, data_format=data_format, _submit=submit,
    )
