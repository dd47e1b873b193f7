"""qhybrid.qaoa."""
