"""A ``module:function`` entry point: Braket's container passes hyperparameters by name."""
from qhybrid.braket import get_job_device_arn, save_job_result


def start_here(n_nodes, stepsize="0.5", **others):
    save_job_result({"n_nodes": n_nodes, "stepsize": stepsize, "others": others, "device": get_job_device_arn()})
