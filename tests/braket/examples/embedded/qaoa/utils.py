"""The job's PennyLane device, from the device string the job was given."""
import os

import pennylane as qml


def get_device(n_wires):
    device_string = os.environ["AMZN_BRAKET_DEVICE_ARN"]
    provider, _, name = device_string.partition(":")[2].partition("/")
    return qml.device(name, wires=n_wires)
