"""qhybrid.plugin."""
