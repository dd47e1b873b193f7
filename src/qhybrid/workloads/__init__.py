"""qhybrid.workloads."""
