"""Train the classifier in one process (Braket's contract; hyperparameters as strings)."""
import os

import torch

from qhybrid.braket import save_job_result
from qhybrid.braket.metrics import log_metric
from qml_script.helper_funs import get_device, seeded_hyperparameters, sonar_dataset, train_epoch
from qml_script.model import DressedQNN


def main():
    input_dir = os.environ["AMZN_BRAKET_INPUT_DIR"]
    hp = seeded_hyperparameters()
    loader = torch.utils.data.DataLoader(sonar_dataset(int(hp["ndata"]), input_dir),
                                         batch_size=int(hp["batch_size"]), shuffle=False)
    model = DressedQNN(get_device(int(hp["nwires"]), os.environ["AMZN_BRAKET_DEVICE_ARN"]))
    optimizer = torch.optim.Adam(model.parameters(), lr=float(hp["lr"]))
    for epoch in range(1, int(hp["epochs"]) + 1):
        loss = train_epoch(model, loader, optimizer)
        log_metric(metric_name="Loss", value=loss.item(), iteration_number=epoch)
    save_job_result({"last loss": float(loss.detach())})


if __name__ == "__main__":
    main()
