"""Job script: train the DressedQNN on Sonar, optionally data parallel.

Hyperparameters (strings): ``nwires``, ``ndata``, ``batch_size`` (the global
batch), ``epochs``, ``lr``, ``gamma`` (StepLR factor per epoch), ``seed``,
``dtype`` (``complex128`` or ``complex64``), ``val_fraction`` (the share of the ``ndata``
samples held out for validation, default 0.25), and ``fail_rank`` (fault
injection for testing the runtime: that rank raises after its first epoch).
Device: ``local:qhybrid/qhybrid.cpu|gpu`` trains the :class:`QuantumLayer`;
``local:pennylane/<name>`` the same model on PennyLane's ``TorchLayer``
(adjoint) for comparison.

Data parallelism: every rank draws its share of each global batch through a
``DistributedSampler`` (shuffled with ``seed`` and the epoch). Rank ``r`` of
``W`` gets positions ``r, r+W, ...`` of the epoch's permutation and local
batches of ``batch_size / W``, so local batch ``j`` of all ranks together is
exactly global batch ``j`` of a single-process run. With equal local batch
sizes (``batch_size`` and ``ndata`` divisible by ``W``; checked), DDP's mean
of the ranks' mean-loss gradients is the global batch's mean gradient, and the
run follows the single-process trajectory to rounding. Rank 0 alone logs,
checkpoints and writes results; loss and accuracy are all-reduced first.

Validation: a seeded, stratified split (``split``) holds out ``val_fraction`` of the
samples, in each class's proportion; the rest train. The split does not depend on the
number of processes, so data-parallel runs follow the single-process run.

Per epoch (``iteration_number`` = epoch): metrics ``Loss`` (mean margin loss
over the epoch's training samples, each taken in its batch's forward pass, before that
batch's update), ``train_accuracy`` (same samples), ``val_loss`` and ``val_accuracy``
(the held-out samples, after the epoch) and ``epoch_seconds``; a
checkpoint ``<job>_qml.json`` (model, optimizer, scheduler, epoch, history; plain JSON,
tensors as exact lists, so resuming never unpickles) from which a later run resumes, its own or one copied in with
``copy_checkpoints_from_job``. At the end ``results/model.pt`` (the state
dict) and the result: ``accuracy`` (the validation accuracy after the last epoch),
``train_accuracy``, ``val_loss``, ``loss`` (training), ``losses``, ``val_accuracies``,
``epoch_seconds``, ``world_size``, ``device``, ``summary`` (in words) and the sizes.

Runs as ``python qml.py`` under the job runtime or standalone.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

# numba's OpenMP threads (and torch's) sleep when idle instead of spinning: set before torch
# loads the OpenMP runtime, which reads it once
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from qhybrid.errors import DeviceError, SpecError

CHECKPOINT_SUFFIX = "qml"
DTYPE_NAMES = ("complex128", "complex64")
DEFAULTS = {"nwires": "10", "ndata": "208", "batch_size": "16", "epochs": "10", "lr": "0.05",
            "gamma": "0.9", "seed": "1967", "dtype": "complex128", "val_fraction": "0.25", "fail_rank": "-1"}


@dataclass(frozen=True)
class Settings:
    """Validated hyperparameters."""

    nwires: int
    ndata: int
    batch_size: int
    epochs: int
    lr: float
    gamma: float
    seed: int
    dtype: str = "complex128"
    val_fraction: float = 0.25
    fail_rank: int = -1


def _number(hp: dict, key: str, kind, low, high=None):
    text = str(hp.get(key, DEFAULTS[key]))
    try:
        value = kind(text)
    except ValueError:
        raise SpecError(f"hyperparameter {key}={text!r} is not {'an integer' if kind is int else 'a number'}")
    if value < low or (high is not None and value > high):
        span = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise SpecError(f"hyperparameter {key}={text!r} out of range: must be {span}")
    return value


def parse_settings(hp: dict) -> Settings:
    """Validate the string hyperparameters (defaults in ``DEFAULTS``).

    Keys the runtime adds for Braket compatibility (``sagemaker_*``) are ignored.

    Raises:
        SpecError: naming the bad value and the valid range.
    """
    unknown = sorted(k for k in set(hp) - set(DEFAULTS) if not k.startswith("sagemaker_"))
    if unknown:
        raise SpecError(f"unknown hyperparameter {unknown[0]!r}; valid: {', '.join(DEFAULTS)}")
    dtype = str(hp.get("dtype", DEFAULTS["dtype"]))
    if dtype not in DTYPE_NAMES:
        raise SpecError(f"hyperparameter dtype={dtype!r}: valid are {', '.join(DTYPE_NAMES)}")
    settings = Settings(
        nwires=_number(hp, "nwires", int, 2, 30), ndata=_number(hp, "ndata", int, 1, 208),
        batch_size=_number(hp, "batch_size", int, 1), epochs=_number(hp, "epochs", int, 1),
        lr=_number(hp, "lr", float, 0.0), gamma=_number(hp, "gamma", float, 0.0, 1.0),
        seed=_number(hp, "seed", int, 0), dtype=dtype,
        val_fraction=_number(hp, "val_fraction", float, 0.0, 0.9), fail_rank=_number(hp, "fail_rank", int, -1),
    )
    if settings.nwires == 3:
        raise SpecError("hyperparameter nwires=3: the range-3 entangling layer would put control and "
                        "target on one wire; use 2 or at least 4 wires")
    return settings


def split(y, val_fraction: float, *, seed: int):
    """A seeded, stratified split: ``(train_index, val_index)`` as sorted lists.

    ``round(val_fraction * len(y))`` samples are held out, shared among the classes in proportion
    to their sizes (largest remainder); within a class they are drawn by a permutation seeded with
    ``seed``.
    """
    import numpy as np

    labels = np.asarray(y)
    classes = sorted(set(labels.tolist()))
    n_val = int(round(val_fraction * len(labels)))
    members = {c: np.flatnonzero(labels == c) for c in classes}
    exact = {c: n_val * len(members[c]) / len(labels) for c in classes}
    take = {c: int(exact[c]) for c in classes}
    for c in sorted(classes, key=lambda c: -(exact[c] - take[c]))[: n_val - sum(take.values())]:
        take[c] += 1
    rng = np.random.default_rng(seed)
    val = sorted(int(i) for c in classes for i in rng.permutation(members[c])[: take[c]])
    held = set(val)
    return [i for i in range(len(labels)) if i not in held], val


def check_world(settings: Settings, world_size: int, n_train: int | None = None) -> int:
    """The local batch size ``batch_size / world_size``.

    Raises:
        SpecError: when ``batch_size`` or the training sample count (``ndata`` less the
            validation share; ``ndata`` when ``n_train`` is not given) is not divisible by
            ``world_size``.
    """
    counts = {"batch_size": settings.batch_size, "ndata": settings.ndata if n_train is None else n_train}
    for key, value in counts.items():
        if value % world_size:
            what = (f"hyperparameter {key}={value}" if key == "batch_size" or n_train is None else
                    f"the {value} training samples (ndata={settings.ndata} less val_fraction="
                    f"{settings.val_fraction:g})")
            raise SpecError(f"{what} is not divisible by the {world_size} "
                            f"data-parallel processes; use a multiple of {world_size}")
    return settings.batch_size // world_size


def find_data(folder: Path | None) -> Path | None:
    """``sonar.all-data`` in an input channel folder, else its first CSV; None when there is none.

    The job reads channel ``input-data`` (the Braket example's name), then ``input``.
    """
    if folder is None or not folder.is_dir():
        return None
    named = [p for p in folder.rglob("sonar.all-data")]
    if named:
        return named[0]
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith("."))
    csvs = [p for p in files if p.suffix in (".csv", ".data")] or files
    return csvs[0] if csvs else None


def build_model(settings: Settings, device_string: str):
    """The DressedQNN for a device string, and the torch device it lives on."""
    import torch

    from qhybrid.devices import parse_device, resolve
    from qhybrid.qml import DressedQNN

    spec = parse_device(device_string)
    dtype = getattr(torch, settings.dtype)
    torch.manual_seed(settings.seed)  # the linear layers: identical on every rank
    if spec.provider == "qhybrid":
        use_cuda = spec.name == "qhybrid.gpu"
        if use_cuda and not torch.cuda.is_available():
            raise DeviceError(f"device {device_string!r} needs CUDA, which torch does not see; "
                              "use local:qhybrid/qhybrid.cpu")
        where = torch.device("cuda", torch.cuda.current_device()) if use_cuda else torch.device("cpu")
        gen = torch.Generator().manual_seed(settings.seed)
        kernels = resolve(device_string).kernel_set()  # chosen once, with the device
        return DressedQNN(settings.nwires, dtype=dtype, device=where, generator=gen, kernel=kernels), where
    from qhybrid.qml.reference import pennylane_layer

    real = torch.float64 if settings.dtype == "complex128" else torch.float32
    layer = pennylane_layer(settings.nwires, spec.name, dtype=real)
    gen = torch.Generator().manual_seed(settings.seed)  # same initial weights as QuantumLayer
    with torch.no_grad():
        for name in ("w_layer1", "w_layer2"):
            getattr(layer, name).copy_(torch.rand((2, settings.nwires, 3), generator=gen,
                                                  dtype=torch.float64) * 2 * torch.pi)
        layer.rotation.copy_(torch.rand((3,), generator=gen, dtype=torch.float64) * 2 * torch.pi)
    torch.manual_seed(settings.seed)
    return DressedQNN(settings.nwires, dtype=dtype, qlayer=layer), torch.device("cpu")


def set_threads(device_string: str) -> None:
    """Give this rank's threads (cores / local ranks, set by ``distributed()``) to the simulator.

    On ``qhybrid.cpu`` the simulation runs in serial numba kernels on the engine's
    Python threads (``qhybrid.sim.pool``: as many as numba's thread count, the
    engine's one thread setting), which get the threads; torch keeps one, because
    its ops here are small and idle threads spinning between them cost more than
    they give on shared cores (``OMP_WAIT_POLICY=PASSIVE`` is set at the top of
    this script for torch's OpenMP). The estimate's calibration and benchmark set the same
    (what they time is this job's step). numba's library loads without its scipy probe
    (``numba_load.skip_blas_probe``: a third of a second of the first batch).
    """
    import torch

    if "qhybrid.cpu" not in device_string:
        return
    try:
        from qhybrid.workloads import numba_load

        numba_load.skip_blas_probe()
        import numba
    except ImportError:  # pragma: no cover - the torch kernels then use torch's threads
        return
    numba.set_num_threads(max(1, min(torch.get_num_threads(), numba.config.NUMBA_NUM_THREADS)))
    torch.set_num_threads(1)


def plain(value):
    """A checkpoint value as JSON: tensors as exact lists with shape and dtype, dicts as key/value
    pairs (optimizer state is keyed by integers). ``unplain`` inverts it."""
    import torch

    if isinstance(value, torch.Tensor):
        t = value.detach().cpu()
        parts = [t.real.reshape(-1).tolist(), t.imag.reshape(-1).tolist()] if t.is_complex() else [t.reshape(-1).tolist()]
        return {"tensor": parts, "shape": list(t.shape), "dtype": str(t.dtype).removeprefix("torch.")}
    if isinstance(value, dict):
        return {"pairs": [[plain(k), plain(v)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return {"list": [plain(v) for v in value], "tuple": isinstance(value, tuple)}
    return value


def unplain(value):
    """The checkpoint value ``plain`` made."""
    import torch

    if not isinstance(value, dict):
        return value
    if "tensor" in value:
        dtype = getattr(torch, value["dtype"])
        parts = [torch.tensor(p, dtype=torch.float64) for p in value["tensor"]]
        flat = torch.complex(*parts) if len(parts) == 2 else torch.tensor(value["tensor"][0], dtype=dtype)
        return flat.to(dtype).reshape(value["shape"])
    if "pairs" in value:
        return {unplain(k): unplain(v) for k, v in value["pairs"]}
    items = [unplain(v) for v in value["list"]]
    return tuple(items) if value["tuple"] else items


def train_step(net, optimizer, xb, yb):
    """One optimizer step of the job on the batch ``(xb, yb)``: ``[loss sum, correct, count]`` (float64),
    the loss and accuracy taken in the batch's forward pass, before the update."""
    import torch

    from qhybrid.qml import accuracy, margin_loss

    optimizer.zero_grad()
    scores = net(xb)
    loss = margin_loss(scores, yb)
    loss.backward()
    optimizer.step()
    n = len(yb)
    return torch.tensor([float(loss.detach()) * n, accuracy(scores.detach(), yb) * n, n], dtype=torch.float64)


def train_epoch(net, optimizer, loader, where):
    """One epoch's training steps (:func:`train_step` on each batch of ``loader``): ``[loss sum, correct, count]``."""
    import torch

    sums = torch.zeros(3, dtype=torch.float64)
    net.train()
    for xb, yb in loader:
        sums += train_step(net, optimizer, xb.to(where), yb.to(where))
    return sums


def evaluate(model, X, y, where) -> tuple[float | None, float | None]:
    """Mean margin loss and accuracy of ``model`` on held-out samples (None, None when there are none):
    the job's evaluation after each epoch."""
    import torch

    from qhybrid.qml import accuracy, margin_loss

    if len(y) == 0:
        return None, None
    model.eval()
    with torch.no_grad():
        scores = model(X.to(where))
        return float(margin_loss(scores, y.to(where))), accuracy(scores, y.to(where))


def _summary(acc, n_val: int, n_train: int, y_val) -> str:
    """The answer in words: held-out accuracy against the majority class."""
    if not n_val or acc is None:
        return f"training accuracy {acc:.3f} on {n_train} samples (nothing held out: val_fraction=0)"
    majority = max(float((y_val > 0).float().mean()), float((y_val <= 0).float().mean()))
    return (f"validation accuracy {acc:.3f} on {n_val} held-out samples (majority class {majority:.3f}; "
            f"trained on {n_train})")


def train(settings: Settings, *, device_string: str, data_path=None) -> dict:
    """Train; return the result dict (on every rank; rank 0 also saves it).

    On ``qhybrid.cpu`` with an empty kernel cache, a child process compiles the layer's kernels
    first thing (``numba_load.compile_ahead``), while this process imports torch and loads the
    data; the first batch then waits for each kernel only as long as it is still compiling."""
    from qhybrid.devices import resolve
    from qhybrid.workloads import numba_load

    if resolve(device_string).kernels == "numba":
        numba_load.compile_ahead(settings.dtype, workload="qml")
    try:
        return _train(settings, device_string=device_string, data_path=data_path)
    finally:
        numba_load.end_children()


def _train(settings: Settings, *, device_string: str, data_path=None) -> dict:
    import torch
    import torch.distributed as dist
    from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

    from qhybrid import jobs
    from qhybrid.qml import load_sonar
    from qhybrid.qml.data import sample

    info = jobs.distributed()
    world, rank = info["world_size"], info["rank"]
    set_threads(device_string)
    X, y = sample(*load_sonar(data_path), settings.ndata, seed=settings.seed)
    train_idx, val_idx = split(y, settings.val_fraction, seed=settings.seed)
    local_batch = check_world(settings, world, len(train_idx))
    X_val, y_val = X[val_idx], y[val_idx]
    X, y = X[train_idx], y[train_idx]
    model, where = build_model(settings, device_string)
    ddp = None
    if world > 1:
        from torch.nn.parallel import DistributedDataParallel

        ddp = DistributedDataParallel(model, device_ids=[where.index] if where.type == "cuda" else None)
    net = ddp or model
    optimizer = torch.optim.Adam(net.parameters(), lr=settings.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=settings.gamma)
    history = {"loss": [], "accuracy": [], "val_loss": [], "val_accuracy": [], "epoch_seconds": []}
    start_epoch = 1
    state = jobs.latest_checkpoint(CHECKPOINT_SUFFIX)
    if state is not None:
        state = unplain(state["state"])
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        history = {**history, **state["history"]}
        start_epoch = state["epoch"] + 1
        if rank == 0:
            tail = "" if os.environ.get("AMZN_BRAKET_CHECKPOINT_DIR") else " (standalone run; delete the folder to start over)"
            print(f"qhybrid: resuming after epoch {state['epoch']} from the checkpoint in {jobs.checkpoint_dir()}{tail}",
                  flush=True)
    dataset = TensorDataset(X, y)
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=settings.seed)
    loader = DataLoader(dataset, batch_size=local_batch, sampler=sampler)
    for epoch in range(start_epoch, settings.epochs + 1):
        sampler.set_epoch(epoch)
        began = time.perf_counter()
        sums = train_epoch(net, optimizer, loader, where)
        scheduler.step()
        if world > 1:
            dist.all_reduce(sums)
        val_loss, val_acc = evaluate(model, X_val, y_val, where)
        seconds = time.perf_counter() - began
        history["loss"].append(float(sums[0] / sums[2]))
        history["accuracy"].append(float(sums[1] / sums[2]))
        history["val_loss"].append(val_loss)
        history["val_accuracy"].append(val_acc)
        history["epoch_seconds"].append(seconds)
        if rank == 0:
            stamp = time.time()  # one timestamp: the epoch's metrics land in one row
            for key, value in (("Loss", history["loss"][-1]), ("train_accuracy", history["accuracy"][-1]),
                               ("val_loss", val_loss), ("val_accuracy", val_acc), ("epoch_seconds", seconds)):
                jobs.log_metric(key, value, timestamp=stamp, iteration_number=epoch)
            jobs.save_job_checkpoint(
                {"state": plain({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                                 "scheduler": scheduler.state_dict(), "epoch": epoch, "history": history})},
                checkpoint_file_suffix=CHECKPOINT_SUFFIX)
        if rank == settings.fail_rank:
            raise RuntimeError(f"fault injected on rank {rank} after epoch {epoch} (fail_rank={rank})")
    last = (lambda key: history[key][-1] if history.get(key) else None)
    accuracy_ = last("val_accuracy") if val_idx else last("accuracy")
    result = {"summary": _summary(accuracy_, len(val_idx), len(train_idx), y_val),
              "accuracy": accuracy_, "val_accuracy": last("val_accuracy"), "val_loss": last("val_loss"),
              "train_accuracy": last("accuracy"), "loss": last("loss"),
              "losses": history["loss"], "val_accuracies": history.get("val_accuracy", []),
              "epoch_seconds": history["epoch_seconds"], "n_train": len(train_idx), "n_val": len(val_idx),
              "world_size": world, "device": device_string, "nwires": settings.nwires,
              "ndata": settings.ndata, "batch_size": settings.batch_size, "epochs": settings.epochs}
    if rank == 0:
        torch.save(model.state_dict(), jobs.results_dir() / "model.pt")
        jobs.save_job_result(result)
    if world > 1:
        dist.barrier()
    return result


def main() -> dict:
    """Entry point under the job contract."""
    from qhybrid import jobs

    settings = parse_settings(jobs.hyperparameters())
    data = find_data(jobs.input_dir("input-data")) or find_data(jobs.input_dir("input"))
    return train(settings, device_string=jobs.device(), data_path=data)


if __name__ == "__main__":
    main()
