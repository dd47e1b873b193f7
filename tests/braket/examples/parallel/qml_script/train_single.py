"""Train the classifier in one process (Braket's contract; hyperparameters as strings)."""
import json
import os

import numpy as np
import torch
import torch.nn.functional as F

from qhybrid.braket import save_job_result
from qhybrid.braket.metrics import log_metric
from qml_script.helper_funs import get_device, sonar_dataset
from qml_script.model import DressedQNN


def main():
    input_dir = os.environ["AMZN_BRAKET_INPUT_DIR"]
    with open(os.environ["AMZN_BRAKET_HP_FILE"]) as f:
        hp = json.load(f)
    torch.manual_seed(int(hp["seed"]))
    np.random.seed(int(hp["seed"]))
    loader = torch.utils.data.DataLoader(sonar_dataset(int(hp["ndata"]), input_dir),
                                         batch_size=int(hp["batch_size"]), shuffle=False)
    model = DressedQNN(get_device(int(hp["nwires"]), os.environ["AMZN_BRAKET_DEVICE_ARN"]))
    optimizer = torch.optim.Adam(model.parameters(), lr=float(hp["lr"]))
    for epoch in range(1, int(hp["epochs"]) + 1):
        for data, target in loader:
            optimizer.zero_grad()
            output = model(data)
            loss = F.margin_ranking_loss(output, torch.zeros_like(output), target, margin=0.1)
            loss.backward()
            optimizer.step()
        log_metric(metric_name="Loss", value=loss.item(), iteration_number=epoch)
    save_job_result({"last loss": float(loss.detach())})


if __name__ == "__main__":
    main()
