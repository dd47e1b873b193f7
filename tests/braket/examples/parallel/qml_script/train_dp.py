"""Data-parallel training written against SageMaker's smdistributed (as Braket's example is)."""
import json
import os

import numpy as np
import smdistributed.dataparallel.torch.distributed as dist
import torch
import torch.nn.functional as F
from smdistributed.dataparallel.torch.parallel.distributed import DistributedDataParallel as DDP

from qhybrid.braket import save_job_result
from qhybrid.braket.metrics import log_metric
from qml_script.helper_funs import get_device, sonar_dataset
from qml_script.model import DressedQNN


def main():
    input_dir = os.environ["AMZN_BRAKET_INPUT_DIR"]
    output_dir = os.environ["AMZN_BRAKET_JOB_RESULTS_DIR"]
    with open(os.environ["AMZN_BRAKET_HP_FILE"]) as f:
        hp = json.load(f)
    torch.manual_seed(int(hp["seed"]))
    np.random.seed(int(hp["seed"]))

    dist.init_process_group()
    dp_info = {"world_size": dist.get_world_size(), "rank": dist.get_rank(), "local_rank": dist.get_local_rank()}
    print("dp_info:", dp_info)
    batch_size = max(int(hp["batch_size"]) // dp_info["world_size"], 1)
    dataset = sonar_dataset(int(hp["ndata"]), input_dir)
    sampler = torch.utils.data.distributed.DistributedSampler(
        dataset, num_replicas=dp_info["world_size"], rank=dp_info["rank"], shuffle=False)
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, sampler=sampler)

    model = DDP(DressedQNN(get_device(int(hp["nwires"]), os.environ["AMZN_BRAKET_DEVICE_ARN"])))
    optimizer = torch.optim.Adam(model.parameters(), lr=float(hp["lr"]))
    for epoch in range(1, int(hp["epochs"]) + 1):
        for data, target in loader:
            optimizer.zero_grad()
            output = model(data)
            loss = F.margin_ranking_loss(output, torch.zeros_like(output), target, margin=0.1)
            loss.backward()
            optimizer.step()
        if dp_info["rank"] == 0:
            log_metric(metric_name="Loss", value=loss.item(), iteration_number=epoch)
    dist.barrier()
    if dp_info["rank"] == 0:
        torch.save(model.state_dict(), f"{output_dir}/model.pt")
        save_job_result({"last loss": float(loss.detach()), "world_size": dp_info["world_size"]})


if __name__ == "__main__":
    main()
