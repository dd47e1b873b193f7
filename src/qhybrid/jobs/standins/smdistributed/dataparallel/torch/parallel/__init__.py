"""Stand-in for ``smdistributed.dataparallel.torch.parallel``."""
