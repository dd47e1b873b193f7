"""The machine of each instance type, as the model sees it: cores, arithmetic, bandwidth, memory, links.

The catalogue (``data/instances.csv``) gives vCPUs, memory, GPUs, the GPU model's
memory bandwidth, the host CPU generation and its socket bandwidth. The rest is
rules as data, one line per CPU generation or GPU model, from vendor figures:
double-precision flops per cycle per core and a sustained all-core clock; a GPU
model's peak FP64/FP32 arithmetic. Where the catalogue leaves the host CPU
blank, ``HOST_CPU`` names the EC2 instance family's processor (an assumption,
marked as such in :attr:`Machine.assumed`).

Locally the model rests on this machine's own measurement
(:mod:`qhybrid.estimate.calibrate`); an instance's rates are the local ones
scaled by the ratio of the two machines' peak figures.
"""
from __future__ import annotations

from dataclasses import dataclass, field


# generation: (double-precision flops / cycle / core, sustained GHz, L3 MiB per socket)
CPU_GENERATIONS = {
    "Haswell": (16, 2.6, 30),       # AVX2, 2 FMA units
    "Broadwell": (16, 2.5, 45),
    "Skylake": (32, 2.9, 33),       # t3: Xeon Platinum 8175M / 8259CL class, AVX-512
    "Skylake-SP": (32, 2.9, 33),
    "Cascade Lake": (32, 3.0, 36),
    "AMD EPYC Milan": (16, 3.0, 256),   # Zen 3, AVX2
    "AMD EPYC": (16, 2.5, 32),      # this kind of machine (PERF_NOTES): Zen, AVX2
}
# socket bandwidth (GB/s) for generations the catalogue does not rate
SOCKET_BANDWIDTH = {"Skylake": 128.0, "Cascade Lake": 141.0, "AMD EPYC Milan": 205.0}
# host CPUs of instance families whose catalogue row leaves it blank (EC2 family pages)
HOST_CPU = {"ml.g4dn": "Cascade Lake", "ml.g6": "AMD EPYC Milan", "ml.g6e": "AMD EPYC Milan"}
# GPU model: (peak FP64 TFLOP/s, peak FP32 TFLOP/s), vendor datasheets (per GPU; K80 per GK210 die)
GPU_MODELS = {
    "K80": (1.45, 4.4),
    "V100": (7.8, 15.7),
    "A100": (9.7, 19.5),
    "T4": (0.25, 8.1),
    "L4": (0.49, 30.3),
    "L40S": (1.43, 91.6),
    "H100": (34.0, 67.0),
    "H200": (34.0, 67.0),
}
# GPU model: CUDA compute capability (NVIDIA's "CUDA GPUs" table): which kernel set a type runs
GPU_CAPABILITY = {"K80": (3, 7), "V100": (7, 0), "T4": (7, 5), "A100": (8, 0), "L4": (8, 9), "L40S": (8, 9),
                  "H100": (9, 0), "H200": (9, 0)}
# links between GPUs of one instance (GB/s per direction) and the instance's network (GB/s)
GPU_LINK_GBS = {"V100": 150.0, "A100": 300.0}  # NVLink; other models talk over PCIe
PCIE_GBS = 12.0
NETWORK_GBS = {"ml.p3.16xlarge": 3.1, "ml.p3dn.24xlarge": 12.5, "ml.p4d.24xlarge": 50.0,
               "ml.c5n.18xlarge": 12.5, "ml.c5n.9xlarge": 6.2, "ml.g6e.48xlarge": 50.0}
DEFAULT_NETWORK_GBS = 1.25  # "up to 10 Gbit/s"
PER_CORE_BANDWIDTH_GBS = 12.0
# AVX-512 parts count at 256-bit width: LLVM (numba's compiler) prefers 256-bit vectors on them
# (its Skylake-AVX512 / Cascade Lake tuning), so our kernels do not get the 512-bit peak
USED_FLOPS_PER_CYCLE = 16  # what one core's stream can pull; a small instance gets this share

CACHE_GBS_PER_GHZ = 20.0  # one thread's cache-resident scale per GHz (nominal, instances; 24.6 measured here, Zen)


@dataclass(frozen=True)
class Machine:
    """What the model needs of one machine.

    Attributes:
        name: ``local`` or the instance type.
        vcpus: hardware threads the engine may use.
        cores: physical cores (EC2: two vCPUs per core; locally the cores this process may use).
        memory_bytes: RAM.
        peak_gflops: double-precision peak of the vCPUs the job gets (GFLOP/s), at the vector width
            our kernels use (256-bit, see USED_FLOPS_PER_CYCLE).
        bandwidth_gbs: sustained memory bandwidth the job gets (GB/s), all threads.
        l3_bytes: last-level cache (states smaller than this are not DRAM-bound).
        thread_bandwidth_gbs: one thread's DRAM bandwidth (numpy's serial copies).
        cache_bandwidth_gbs: one thread's bandwidth over a working set resident in the last-level cache.
        gpus, gpu_model, gpu_memory_bytes, gpu_bandwidth_gbs, gpu_fp64_gflops, gpu_fp32_gflops: per GPU.
        gpu_capability: the GPU's CUDA compute capability ``(major, minor)``, ``()`` unknown.
        gpu_link_gbs: between the GPUs of this machine; network_gbs: to other instances.
        assumed: the facts the model assumed (not in the catalogue), for the notes.
    """

    name: str
    vcpus: int
    cores: int
    memory_bytes: int
    peak_gflops: float
    bandwidth_gbs: float
    l3_bytes: int
    thread_bandwidth_gbs: float = PER_CORE_BANDWIDTH_GBS
    cache_bandwidth_gbs: float = 30.0
    gpus: int = 0
    gpu_model: str = ""
    gpu_memory_bytes: int = 0
    gpu_bandwidth_gbs: float = 0.0
    gpu_fp64_gflops: float = 0.0
    gpu_fp32_gflops: float = 0.0
    gpu_link_gbs: float = PCIE_GBS
    gpu_capability: tuple[int, ...] = ()
    network_gbs: float = DEFAULT_NETWORK_GBS
    assumed: tuple[str, ...] = field(default=())

    @property
    def core_gflops(self) -> float:
        """One core's double-precision peak."""
        return self.peak_gflops / max(1, self.cores)


def _cpu_figures(generation: str, vcpus: int, socket_gbs: float | None) -> tuple[float, float, int, float, list[str]]:
    """Peak GFLOP/s, bandwidth GB/s, L3 bytes and clock GHz of ``vcpus`` of a generation, and what was assumed."""
    assumed = []
    if generation not in CPU_GENERATIONS:
        assumed.append(f"CPU generation {generation or 'unknown'!r} taken as Skylake-SP")
        generation = "Skylake-SP"
    per_cycle, ghz, l3_mib = CPU_GENERATIONS[generation]
    per_cycle = min(per_cycle, USED_FLOPS_PER_CYCLE)
    cores = max(1, vcpus // 2)  # two hardware threads per core on EC2
    peak = cores * per_cycle * ghz
    if socket_gbs is None:
        socket_gbs = SOCKET_BANDWIDTH.get(generation, 100.0)
        assumed.append(f"socket bandwidth {socket_gbs:g} GB/s for {generation}")
    sockets = 2 if vcpus >= 64 else 1
    bandwidth = min(sockets * socket_gbs, cores * PER_CORE_BANDWIDTH_GBS)
    return peak, bandwidth, sockets * l3_mib * 2**20, ghz, assumed


def instance_machine(inst) -> Machine:
    """The machine of a catalogue :class:`~qhybrid.jobs.instances.Instance`."""
    generation = inst.cpu_generation or HOST_CPU.get(inst.type.rsplit(".", 1)[0], "")
    peak, bandwidth, l3, ghz, assumed = _cpu_figures(generation, inst.vcpus, inst.cpu_socket_bandwidth_gbs)
    if not inst.cpu_generation and generation:
        assumed.insert(0, f"host CPU {generation} (EC2 family page; blank in the catalogue)")
    fp64, fp32 = GPU_MODELS.get(inst.gpu_model, (0.0, 0.0))
    if inst.gpus and inst.gpu_model not in GPU_MODELS:
        assumed.append(f"GPU model {inst.gpu_model!r} has no arithmetic figures")
    return Machine(
        name=inst.type, vcpus=inst.vcpus, cores=max(1, inst.vcpus // 2), memory_bytes=int(inst.memory_gib * 2**30), peak_gflops=peak,
        bandwidth_gbs=bandwidth, l3_bytes=l3, thread_bandwidth_gbs=min(bandwidth, PER_CORE_BANDWIDTH_GBS),
        cache_bandwidth_gbs=CACHE_GBS_PER_GHZ * ghz, gpus=inst.gpus, gpu_model=inst.gpu_model,
        gpu_memory_bytes=int((inst.gpu_memory_gib or 0) * 2**30),
        gpu_bandwidth_gbs=inst.gpu_memory_bandwidth_gbs or 0.0, gpu_fp64_gflops=fp64 * 1000,
        gpu_fp32_gflops=fp32 * 1000, gpu_link_gbs=GPU_LINK_GBS.get(inst.gpu_model, PCIE_GBS),
        gpu_capability=GPU_CAPABILITY.get(inst.gpu_model, ()),
        network_gbs=NETWORK_GBS.get(inst.type, DEFAULT_NETWORK_GBS), assumed=tuple(assumed),
    )


def cpu_model() -> str:
    """This machine's CPU model name (``/proc/cpuinfo``), the key of the calibration cache."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:  # pragma: no cover - not Linux
        pass
    import platform

    return platform.processor() or platform.machine() or "unknown CPU"


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:  # pragma: no cover
        pass
    return set()


def local_l3_bytes() -> int:
    try:
        with open("/sys/devices/system/cpu/cpu0/cache/index3/size", encoding="utf-8") as f:
            text = f.read().strip().upper()
        scale = {"K": 2**10, "M": 2**20}.get(text[-1], 1)
        return int(text.rstrip("KM")) * scale
    except (OSError, ValueError):
        return 32 * 2**20


def local_peak_gflops(cores: int) -> float:
    """This machine's double-precision peak over ``cores`` threads, from its vector flags and clock."""
    flags = _cpu_flags()
    per_cycle = min(32 if "avx512f" in flags else 16 if ("avx2" in flags and "fma" in flags) else 8,
                    USED_FLOPS_PER_CYCLE)
    ghz = 2.5
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("cpu MHz"):
                    ghz = float(line.split(":", 1)[1]) / 1000
                    break
    except (OSError, ValueError):  # pragma: no cover
        pass
    return cores * per_cycle * ghz
