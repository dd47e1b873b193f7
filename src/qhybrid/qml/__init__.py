"""qhybrid.qml."""
