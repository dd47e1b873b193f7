"""Stand-in for SageMaker's ``smdistributed`` (only ``dataparallel.torch``), over torch.distributed.

Put on the PYTHONPATH of qhybrid's data-parallel jobs when the real package is absent.
"""
