"""Stand-in for ``smdistributed.dataparallel.torch``: ``distributed`` and ``parallel.distributed``."""
