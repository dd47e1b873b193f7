"""``smdistributed.dataparallel.torch.distributed`` over ``torch.distributed``.

The job's RANK / LOCAL_RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT (set by
qhybrid's supervisor) say who is who; ``init_process_group`` joins the group
with gloo on CPU and nccl when the job's device is a GPU one and CUDA is there.
Every other name is torch.distributed's own (``all_reduce``, ``broadcast``, ...).
"""
from __future__ import annotations

import os

import torch
import torch.distributed as _dist

from qhybrid.jobs.script import rank_gpu


def init_process_group(backend: str | None = None, **kwargs) -> None:
    """Join the job's process group (a no-op when already joined)."""
    if _dist.is_initialized():
        return
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")
    threads = os.environ.get("QHYBRID_TORCH_THREADS")
    if threads:
        torch.set_num_threads(max(1, int(threads)))
    gpu = rank_gpu(get_local_rank())
    if gpu is not None:
        torch.cuda.set_device(gpu)
    chosen = "nccl" if gpu is not None else "gloo"
    if backend not in (None, "smddp"):
        chosen = backend
    kwargs.setdefault("rank", int(os.environ.get("RANK", "0")))
    kwargs.setdefault("world_size", int(os.environ.get("WORLD_SIZE", "1")))
    _dist.init_process_group(backend=chosen, **kwargs)


def is_initialized() -> bool:
    return _dist.is_initialized()


def get_world_size(group=None) -> int:
    return _dist.get_world_size(group) if _dist.is_initialized() else int(os.environ.get("WORLD_SIZE", "1"))


def get_rank(group=None) -> int:
    return _dist.get_rank(group) if _dist.is_initialized() else int(os.environ.get("RANK", "0"))


def get_local_rank() -> int:
    return int(os.environ.get("LOCAL_RANK", "0"))


def get_local_size() -> int:
    return int(os.environ.get("LOCAL_WORLD_SIZE", "1"))


def barrier(group=None) -> None:
    _dist.barrier(group) if group is not None else _dist.barrier()


def __getattr__(name):  # all_reduce, broadcast, ReduceOp, destroy_process_group, ...
    return getattr(_dist, name)
