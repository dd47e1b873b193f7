"""``smdistributed.dataparallel.torch.parallel.distributed``: its DistributedDataParallel is torch's."""
from __future__ import annotations

from torch.nn.parallel import DistributedDataParallel as _TorchDDP


class DistributedDataParallel(_TorchDDP):
    """torch's DistributedDataParallel with smdistributed's keywords (``device_ids`` None on CPU)."""

    def __init__(self, module, device_ids=None, output_device=None, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=25, **kwargs):
        if next(module.parameters()).device.type == "cpu":
            device_ids, output_device = None, None
        super().__init__(module, device_ids=device_ids, output_device=output_device,
                         broadcast_buffers=broadcast_buffers, process_group=process_group,
                         bucket_cap_mb=bucket_cap_mb, **kwargs)
