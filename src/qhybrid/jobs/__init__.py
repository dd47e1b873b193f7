"""qhybrid.jobs."""
