"""Stand-in for ``smdistributed.dataparallel``: see ``smdistributed.dataparallel.torch``."""
