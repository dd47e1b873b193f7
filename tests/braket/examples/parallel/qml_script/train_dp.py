"""Data-parallel training written against SageMaker's smdistributed (as Braket's example is)."""
import os

import smdistributed.dataparallel.torch.distributed as dist
import torch
from smdistributed.dataparallel.torch.parallel.distributed import DistributedDataParallel as DDP

from qhybrid.braket import save_job_result
from qhybrid.braket.metrics import log_metric
from qml_script.helper_funs import get_device, seeded_hyperparameters, sonar_dataset, train_epoch
from qml_script.model import DressedQNN


def main():
    input_dir = os.environ["AMZN_BRAKET_INPUT_DIR"]
    output_dir = os.environ["AMZN_BRAKET_JOB_RESULTS_DIR"]
    hp = seeded_hyperparameters()

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
        loss = train_epoch(model, loader, optimizer)
        if dp_info["rank"] == 0:
            log_metric(metric_name="Loss", value=loss.item(), iteration_number=epoch)
    dist.barrier()
    if dp_info["rank"] == 0:
        torch.save(model.state_dict(), f"{output_dir}/model.pt")
        save_job_result({"last loss": float(loss.detach()), "world_size": dp_info["world_size"]})


if __name__ == "__main__":
    main()
