"""qhybrid.qml: the DressedQNN's quantum layer on batched torch state vectors.

    from qhybrid.qml import QuantumLayer, DressedQNN, load_sonar
"""
from qhybrid.qml.data import load_sonar
from qhybrid.qml.layer import QuantumLayer
from qhybrid.qml.model import DressedQNN, accuracy, margin_loss

__all__ = ["QuantumLayer", "DressedQNN", "load_sonar", "margin_loss", "accuracy"]
