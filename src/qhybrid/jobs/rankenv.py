"""What each rank of a job starts with: its environment (the Braket contract, threads, GPUs,
the distributed rendezvous) and the interpreter command that runs the entry point."""
from __future__ import annotations

import importlib.util
import os
import socket
import sys

from qhybrid.devices import local_gpus
from qhybrid.jobs import contract, instances, store
from qhybrid.jobs.spec import JobSpec

_INHERITED = contract.DISTRIBUTED_ENV + ("TORCHELASTIC_USE_AGENT_STORE", "TORCHELASTIC_RESTART_COUNT")
STANDINS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "standins")


def free_port() -> int:
    """Return a free TCP port on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((contract.LOOPBACK, 0))
        return s.getsockname()[1]


def job_env(spec: JobSpec, *, rank: int = 0, port: int | None = None, loopback: bool = True) -> dict[str, str]:
    """Return the full environment of one process of a job (the Braket contract plus resources).

    ``loopback``: every rank runs on this machine, so the rendezvous is the supervisor's store on
    127.0.0.1 (``TORCHELASTIC_USE_AGENT_STORE``) and gloo / NCCL talk over ``lo``.
    """
    folder = store.job_dir(spec.name)
    inst = spec.frozen_instance()
    env = {k: v for k, v in os.environ.items() if not k.startswith(contract.BRAKET_PREFIX) and k not in _INHERITED}
    world = spec.world_size
    threads = str(instances.threads_for(inst, world, spec.instance_count if spec.distribution else 1))
    gpus = min(inst.gpus, local_gpus())
    env.update({
        contract.DEVICE_ENV: spec.device,
        contract.HP_FILE_ENV: str(folder / contract.HP_FILE),
        contract.INPUT_DIR_ENV: str(folder / contract.INPUT_DIR),
        contract.RESULTS_DIR_ENV: str(folder / contract.RESULTS_DIR),
        contract.CHECKPOINT_DIR_ENV: str(folder / contract.CHECKPOINT_DIR),
        contract.JOB_NAME_ENV: spec.name,
        contract.TORCH_THREADS_ENV: threads,
        "PYTHONUNBUFFERED": "1",
        "OMP_NUM_THREADS": threads,
        "MKL_NUM_THREADS": threads,
        "QHYBRID_HOME": str(store.home()),
        "CUDA_VISIBLE_DEVICES": ",".join(str(i) for i in range(gpus)),
    })
    if spec.distribution == "data_parallel" and importlib.util.find_spec("smdistributed") is None:
        # smdistributed.dataparallel over torch.distributed; the source folder itself stays off
        # PYTHONPATH (entry puts it first on sys.path once the runner has imported what it needs)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (STANDINS, env.get("PYTHONPATH", "")) if p)
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # idle OpenMP threads sleep instead of spinning (issue 14)
    if spec.distribution:
        env.update(
            RANK=str(rank),
            LOCAL_RANK=str(rank % spec.processes_per_instance),
            WORLD_SIZE=str(world),
            LOCAL_WORLD_SIZE=str(spec.processes_per_instance),
            MASTER_ADDR=contract.LOOPBACK,
            MASTER_PORT=str(port),
        )
        if loopback:
            env.setdefault("GLOO_SOCKET_IFNAME", "lo")
            env.setdefault("NCCL_SOCKET_IFNAME", "lo")
    return env


_BOOT_310 = ("import sys; del sys.path[0]; del sys.argv[1]; import runpy; "
             "runpy.run_module('qhybrid.jobs.entry', run_name='__main__', alter_sys=True)")


def runner_argv(python: str | None = None) -> list[str]:
    """The command that starts a job process, up to its arguments (source folder, entry point).

    The source folder (the working folder) is kept off the front of ``sys.path`` while the runner
    imports what it needs (``-P``; on Python 3.10 a bootstrap that drops it), so a job file named
    like a standard module (``json.py``) cannot break the runner; ``entry`` then puts it first.
    ``python``: the job's own environment's interpreter (default: this one).
    """
    python = python or sys.executable
    if sys.version_info >= (3, 11):
        return [python, "-P", "-m", "qhybrid.jobs.entry"]
    return [python, "-c", _BOOT_310, "qhybrid.jobs.entry"]


class Rendezvous:
    """The torch.distributed store of a job whose ranks all run here, hosted by the supervisor and
    bound to 127.0.0.1 only (a TCPStore of rank 0 would listen on every interface, unauthenticated).
    Ranks reach it through ``env://`` with ``TORCHELASTIC_USE_AGENT_STORE=True``."""

    def __init__(self):
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind((contract.LOOPBACK, 0))
        self._sock.listen(512)
        self.port = self._sock.getsockname()[1]
        self._store = None
        try:
            import datetime

            from torch.distributed import TCPStore

            self._store = TCPStore(contract.LOOPBACK, self.port, None, True, timeout=datetime.timedelta(minutes=30),
                                   wait_for_workers=False, master_listen_fd=self._sock.fileno())
        except Exception:  # noqa: BLE001 - no torch.distributed: ranks bring their own store
            self._sock.close()
            self.port = free_port()

    @property
    def env(self) -> dict[str, str]:
        if self._store is None:
            return {}
        return {"TORCHELASTIC_USE_AGENT_STORE": "True", "TORCHELASTIC_RESTART_COUNT": "0"}
