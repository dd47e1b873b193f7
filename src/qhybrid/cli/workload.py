"""What the workload commands (``qhybrid qaoa``, ``qhybrid qml``) share: defaults, job options,
and the progress line made from the job's metric lines."""
from __future__ import annotations

import re
import sys

CPU_INSTANCE = "ml.m5.2xlarge"
GPU_INSTANCE = "ml.p3.2xlarge"
METRIC = re.compile(r"(\w+)=([-+0-9.eE]+|nan|inf);")


def default_device() -> str:
    """``qhybrid.gpu`` when CUDA is present, else ``qhybrid.cpu``."""
    from qhybrid.devices import cuda_available

    return "local:qhybrid/qhybrid.gpu" if cuda_available() else "local:qhybrid/qhybrid.cpu"


def default_instance(device: str) -> str:
    """The seed's instance types, whose prices are known: a GPU one for GPU devices."""
    from qhybrid.devices import needs_gpu

    return GPU_INSTANCE if needs_gpu(device) else CPU_INSTANCE


def add_job_options(parser) -> None:
    """Add --device, --instance, --name, --backend, --address and --json."""
    parser.add_argument("--device", default=None,
                        help="local:qhybrid/qhybrid.cpu (default; qhybrid.gpu with CUDA) or local:pennylane/<name>")
    parser.add_argument("--instance", default=None,
                        help=f"instance type (default {CPU_INSTANCE}; {GPU_INSTANCE} for GPU devices)")
    parser.add_argument("--name", default=None, help="job name (default generated)")
    parser.add_argument("--backend", choices=("local", "ray"), default="local",
                        help="where the job's processes run: local (default) or ray")
    parser.add_argument("--address", default=None, metavar="ADDR",
                        help="with --backend ray: the Ray cluster, HOST:PORT of its head (ray start --head), "
                        "'auto' or ray://HOST:10001; default $QHYBRID_RAY_ADDRESS, $RAY_ADDRESS, "
                        "else a local cluster on 127.0.0.1")
    parser.add_argument("--json", action="store_true",
                        help="print the result dictionary as JSON on the last line of stdout")


class Progress:
    """Turns a job's metric lines into one progress line on stderr, ``line(seen)``, each time every
    key of ``needed`` has been seen since the last one; other ranks' metric lines (tagged
    ``rank=K;``) are dropped, any other line passes through."""

    def __init__(self, needed: tuple[str, ...], line):
        self.needed = needed
        self.line = line
        self.seen: dict[str, str] = {}

    def __call__(self, text: str) -> None:
        if "Metrics -" not in text:
            print(text, file=sys.stderr, flush=True)
            return
        if "rank=" in text:
            return
        self.seen.update(METRIC.findall(text))
        if all(k in self.seen for k in self.needed):
            print(self.line(self.seen), file=sys.stderr, flush=True)
            self.seen = {}
