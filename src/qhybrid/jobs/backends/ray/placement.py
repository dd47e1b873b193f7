"""Placement of a job on a Ray cluster: one bundle per instance, sized to fit (pure, no Ray)."""
from __future__ import annotations

from dataclasses import dataclass

from qhybrid.errors import ClusterError


@dataclass(frozen=True)
class Placement:
    """Bundles for a job and the share of a bundle each rank's actor takes.

    Attributes:
        bundles: one ``{"CPU": c, "GPU": g}`` per instance (GPU omitted when 0).
        cpus_per_rank, gpus_per_rank: what each rank's actor asks for inside its bundle.
        threads: torch/OpenMP threads per rank.
    """

    bundles: list
    cpus_per_rank: float
    gpus_per_rank: float
    threads: int

    def bundle_of(self, rank: int, processes_per_instance: int) -> int:
        return rank // processes_per_instance


def _fits(count: int, cpus: float, gpus: float, nodes: list[dict]) -> bool:
    """True if `count` bundles of (cpus, gpus) can be packed onto `nodes` at once."""
    free = [[n.get("CPU", 0.0), n.get("GPU", 0.0)] for n in nodes]
    for _ in range(count):
        for slot in free:
            if slot[0] >= cpus - 1e-9 and slot[1] >= gpus - 1e-9:
                slot[0] -= cpus
                slot[1] -= gpus
                break
        else:
            return False
    return True


def plan(*, instance_type: str, vcpus: int, gpus: int, instance_count: int,
         processes_per_instance: int, needs_gpu: bool, nodes: list[dict],
         address: str = "the cluster") -> Placement:
    """Size one bundle per instance to the instance type, capped by what the cluster has.

    CPUs are capped to the largest node and to an equal share of the cluster
    (so a job larger than the cluster still runs, more slowly); GPUs are capped
    to the largest node, and a device that needs a GPU needs one per rank.

    Args:
        nodes: total resources of each live node, e.g. ``[{"CPU": 2.0, "GPU": 0.0}]``.

    Raises:
        ClusterError: when the cluster can never fit the request.
    """
    ppi = processes_per_instance
    if not nodes:
        raise ClusterError(f"the Ray cluster at {address} has no live nodes")
    total_cpus = sum(n.get("CPU", 0.0) for n in nodes)
    max_cpus = max(n.get("CPU", 0.0) for n in nodes)
    max_gpus = max(n.get("GPU", 0.0) for n in nodes)
    cpus = min(float(vcpus), max_cpus, total_cpus / instance_count)
    if total_cpus < instance_count or cpus < 1:
        raise ClusterError(
            f"{instance_count} x {instance_type} needs at least one CPU per instance, but the Ray cluster "
            f"at {address} has {total_cpus:g} CPUs (largest node {max_cpus:g}); "
            f"use a smaller instanceCount or add nodes"
        )
    cpus = float(int(cpus))
    bundle_gpus = float(min(gpus, int(max_gpus)))
    if needs_gpu:
        if bundle_gpus < ppi:
            raise ClusterError(
                f"the device needs a GPU per process: {instance_type} with {ppi} process(es) per instance "
                f"needs {ppi} GPU(s) on one node, but the largest node of the Ray cluster at {address} "
                f"has {max_gpus:g}; add GPU nodes or use a CPU device"
            )
    if not _fits(instance_count, cpus, bundle_gpus, nodes):
        raise ClusterError(
            f"{instance_count} bundle(s) of {cpus:g} CPU / {bundle_gpus:g} GPU ({instance_type}) can never be "
            f"placed together on the Ray cluster at {address} (nodes: "
            + ", ".join(f"{n.get('CPU', 0):g} CPU/{n.get('GPU', 0):g} GPU" for n in nodes) + ")"
        )
    bundle = {"CPU": cpus}
    if bundle_gpus:
        bundle["GPU"] = bundle_gpus
    per_cpu = cpus / ppi
    per_gpu = bundle_gpus / ppi
    if per_gpu > 1:
        per_gpu = float(int(per_gpu))  # Ray needs whole GPUs above one
    return Placement(
        bundles=[dict(bundle) for _ in range(instance_count)],
        cpus_per_rank=per_cpu,
        gpus_per_rank=per_gpu,
        threads=max(1, int(per_cpu)),
    )
