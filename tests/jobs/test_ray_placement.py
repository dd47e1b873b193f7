"""Sizing a job's Ray placement group from its instance type and the cluster's nodes (no Ray needed)."""
from __future__ import annotations

import pytest

from qhybrid.errors import ClusterError
from qhybrid.jobs.backends.ray import placement as ray_placement

TWO_CPUS = [{"CPU": 2.0, "GPU": 0.0}]


def _plan(nodes=TWO_CPUS, **kw):
    args = dict(instance_type="ml.m5.2xlarge", vcpus=8, gpus=0, instance_count=1,
                processes_per_instance=1, needs_gpu=False, nodes=nodes, address="test")
    args.update(kw)
    return ray_placement.plan(**args)


def test_bundle_per_instance_capped_by_the_cluster():
    p = _plan()
    assert p.bundles == [{"CPU": 2.0}] and p.cpus_per_rank == 2.0 and p.threads == 2
    p = _plan(instance_count=2, processes_per_instance=1)
    assert p.bundles == [{"CPU": 1.0}, {"CPU": 1.0}]
    p = _plan(nodes=[{"CPU": 16.0, "GPU": 0.0}], instance_count=1, processes_per_instance=2)
    assert p.bundles == [{"CPU": 8.0}] and p.cpus_per_rank == 4.0 and p.bundle_of(1, 2) == 0


def test_gpus_per_bundle_and_rank():
    nodes = [{"CPU": 8.0, "GPU": 4.0}, {"CPU": 8.0, "GPU": 4.0}]
    p = _plan(nodes=nodes, instance_type="ml.p3.8xlarge", vcpus=32, gpus=4, instance_count=2,
              processes_per_instance=4, needs_gpu=True)
    assert p.bundles == [{"CPU": 8.0, "GPU": 4.0}] * 2 and p.gpus_per_rank == 1.0
    p = _plan(instance_type="ml.p3.2xlarge", gpus=1)  # a CPU device on a GPU instance type, no GPUs here
    assert p.bundles == [{"CPU": 2.0}] and p.gpus_per_rank == 0.0


@pytest.mark.parametrize("kw, words", [
    (dict(instance_count=3), "at least one CPU per instance"),
    (dict(gpus=1, needs_gpu=True), "needs a GPU per process"),
    (dict(nodes=[]), "no live nodes"),
])
def test_requests_the_cluster_can_never_fit(kw, words):
    with pytest.raises(ClusterError, match=words):
        _plan(**kw)
