"""Job script: train the DressedQNN on Sonar, optionally data parallel.

Hyperparameters (strings): ``nwires``, ``ndata``, ``batch_size`` (the global
batch), ``epochs``, ``lr``, ``gamma`` (StepLR factor per epoch), ``seed``,
``dtype`` (``complex128`` or ``complex64``), ``val_fraction`` (the share of the ``ndata``
samples held out for validation, default 0.25), ``max_batch_states`` (the most samples the
engine simulates at once, 0 for as many as fit: a batch is cut into chunks that fit the free
memory, with the same loss and gradients; the chunk is reported in the result), and
``fail_rank`` (fault injection for testing the runtime: that rank raises after its first epoch).
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
The held-out samples are shared out the same way (rank ``r`` evaluates ``r, r+W, ...``)
and their sums all-reduced: each rank simulates a ``W``-th of them.

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
``epoch_seconds``, ``world_size``, ``device``, ``summary`` (in words), the sizes and
``engine_chunk`` (the most samples per engine call in training, and in evaluation; None on PennyLane).

Runs as ``python qml.py`` under the job runtime or standalone.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

# numba's OpenMP threads (and torch's) sleep when idle instead of spinning: set before torch
# loads the OpenMP runtime, which reads it once
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from qhybrid.devices import Target, resolve, torch_device
from qhybrid.jobs.script import say_started
from qhybrid.workloads.qml_checkpoint import plain, unplain  # noqa: F401 - the checkpoint's format
from qhybrid.workloads.qml_settings import (  # noqa: F401 - the job's settings and checks
    DEFAULTS, DTYPE_NAMES, Settings, check_world, memory_share, parse_settings, preflight, split)

CHECKPOINT_SUFFIX = "qml"


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


def build_model(settings: Settings, target: Target | str):
    """The DressedQNN for a device (a device string is resolved here, once), and the torch device it
    lives on.

    Raises:
        DeviceError: a bad device string, or qhybrid.gpu without CUDA.
    """
    import torch

    from qhybrid.qml import DressedQNN, QuantumLayer

    target = resolve(target)
    dtype = getattr(torch, settings.dtype)
    torch.manual_seed(settings.seed)  # the linear layers: identical on every rank
    if target.provider == "qhybrid":
        where = torch_device(target)
        gen = torch.Generator().manual_seed(settings.seed)
        kernels = target.kernel_set()  # chosen once, with the device
        qlayer = QuantumLayer(settings.nwires, dtype=dtype, device=where, generator=gen, kernel=kernels,
                              max_batch_states=settings.max_batch_states or None, memory_share=memory_share())
        return DressedQNN(settings.nwires, dtype=dtype, device=where, qlayer=qlayer), where
    from qhybrid.qml.reference import pennylane_layer

    real = torch.float64 if settings.dtype == "complex128" else torch.float32
    layer = pennylane_layer(settings.nwires, target.name, dtype=real)
    gen = torch.Generator().manual_seed(settings.seed)  # same initial weights as QuantumLayer
    with torch.no_grad():
        for name in ("w_layer1", "w_layer2"):
            getattr(layer, name).copy_(torch.rand((2, settings.nwires, 3), generator=gen,
                                                  dtype=torch.float64) * 2 * torch.pi)
        layer.rotation.copy_(torch.rand((3,), generator=gen, dtype=torch.float64) * 2 * torch.pi)
    torch.manual_seed(settings.seed)
    return DressedQNN(settings.nwires, dtype=dtype, qlayer=layer), torch.device("cpu")


def set_threads(device: str | Target) -> None:
    """Give this rank's threads (cores / local ranks, set by ``distributed()``) to the simulator
    (``device``: its Target, or a device string resolved once here).

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

    if resolve(device).kernels != "numba":  # the engine's CPU kernel set only
        return
    try:
        from qhybrid.workloads import numba_load

        numba_load.skip_blas_probe()
        import numba
    except ImportError:  # pragma: no cover - the torch kernels then use torch's threads
        return
    numba.set_num_threads(max(1, min(torch.get_num_threads(), numba.config.NUMBA_NUM_THREADS)))
    torch.set_num_threads(1)


def train_step(net, optimizer, xb, yb):
    """One optimizer step of the job on the batch ``(xb, yb)``: ``[loss sum, correct, count]`` (float64),
    the loss and accuracy taken in the batch's forward pass, before the update."""
    from qhybrid.qml import margin_loss

    optimizer.zero_grad()
    scores = net(xb)
    loss = margin_loss(scores, yb)
    loss.backward()
    optimizer.step()
    return _sums(float(loss.detach()), scores.detach(), yb)


def _sums(loss: float, scores, labels):
    """``[loss sum, correct, count]`` (float64, on the CPU) of a batch whose mean loss is ``loss``:
    what the ranks add up, for the epoch's training metrics and for the held-out ones."""
    import torch

    n = len(labels)
    hits = float(((scores > 0) == (labels > 0)).sum())  # qml.accuracy's rule, counted: sums of ranks stay exact
    return torch.tensor([loss * n, hits, n], dtype=torch.float64)


def train_epoch(net, optimizer, loader, where, chunks: list | None = None):
    """One epoch's training steps (:func:`train_step` on each batch of ``loader``): ``[loss sum, correct, count]``;
    ``chunks``, when given, gets each step's samples per engine call (our layer's ``last_chunk``)."""
    import torch

    sums = torch.zeros(3, dtype=torch.float64)
    net.train()
    qlayer = getattr(getattr(net, "module", net), "qlayer", None)
    for xb, yb in loader:
        sums += train_step(net, optimizer, xb.to(where), yb.to(where))
        if chunks is not None and getattr(qlayer, "last_chunk", None):
            chunks.append(qlayer.last_chunk)
    return sums


def evaluate(model, X, y, where, *, world: int = 1, rank: int = 0) -> tuple[float | None, float | None]:
    """Mean margin loss and accuracy of ``model`` on held-out samples (None, None when there are none):
    the job's evaluation after each epoch. Over ``world`` ranks each evaluates every ``world``-th
    sample from its ``rank`` and one all-reduce sums the losses and hits, so the answer is the
    single process's (to rounding) at a ``world``-th of the simulations a rank."""
    import torch

    from qhybrid.qml import margin_loss

    if len(y) == 0:
        return None, None
    X, y = X[rank::world], y[rank::world]
    totals = torch.zeros(3, dtype=torch.float64)  # a rank past the last held-out sample adds nothing
    model.eval()
    if len(y):
        with torch.no_grad():
            scores = model(X.to(where))
            totals = _sums(float(margin_loss(scores, y.to(where))), scores, y.to(where))
    if world > 1:
        totals = all_reduce(totals, where)
    return float(totals[0] / totals[2]), float(totals[1] / totals[2])


def all_reduce(sums, where):
    """``sums`` (a CPU tensor) summed over the ranks: on the GPUs' device under nccl, which
    reduces CUDA tensors only, in place under gloo."""
    import torch.distributed as dist

    if dist.get_backend() == "nccl":
        on_device = sums.to(where)
        dist.all_reduce(on_device)
        return on_device.cpu()
    dist.all_reduce(sums)
    return sums


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
    from qhybrid.workloads import numba_load

    target = resolve(device_string)
    if target.kernels == "numba":
        numba_load.compile_ahead(settings.dtype, workload="qml")
    try:
        return _train(settings, device_string=device_string, target=target, data_path=data_path)
    finally:
        numba_load.end_children()


def _train(settings: Settings, *, device_string: str, target: Target, data_path=None) -> dict:
    import torch
    import torch.distributed as dist
    from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

    from qhybrid import jobs

    info = jobs.distributed()
    world, rank = info["world_size"], info["rank"]
    set_threads(target)
    X, y, X_val, y_val, local_batch = _samples(settings, world, data_path)
    model, where = build_model(settings, target)
    net = _data_parallel(model, where) if world > 1 else model
    optimizer = torch.optim.Adam(net.parameters(), lr=settings.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=settings.gamma)
    history, start_epoch = _resume(model, optimizer, scheduler, rank)
    dataset = TensorDataset(X, y)
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=settings.seed)
    loader = DataLoader(dataset, batch_size=local_batch, sampler=sampler)
    train_chunks: list = []
    if rank == 0 and start_epoch <= settings.epochs:  # the display's phase until the epoch's metrics
        say_started(f"training epoch {start_epoch} of {settings.epochs} ({len(y)} samples; metrics at its end)")
    for epoch in range(start_epoch, settings.epochs + 1):
        sampler.set_epoch(epoch)
        began = time.perf_counter()
        sums = train_epoch(net, optimizer, loader, where, train_chunks)
        scheduler.step()
        if world > 1:
            sums = all_reduce(sums, where)
        val_loss, val_acc = evaluate(model, X_val, y_val, where, world=world, rank=rank)
        _add_epoch(history, sums, val_loss, val_acc, time.perf_counter() - began)
        if rank == 0:
            _log_epoch(epoch, history, {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                                        "scheduler": scheduler.state_dict()})
        if rank == settings.fail_rank:
            raise RuntimeError(f"fault injected on rank {rank} after epoch {epoch} (fail_rank={rank})")
    chunks = {"train": max(train_chunks, default=None), "eval": getattr(model.qlayer, "last_chunk", None)}
    result = _result(settings, history, n_train=len(y), y_val=y_val, world=world, device_string=device_string,
                     chunks=chunks)
    if rank == 0:
        torch.save(model.state_dict(), jobs.results_dir() / "model.pt")
        jobs.save_job_result(result)
    if world > 1:
        dist.barrier()
    return result


def _samples(settings: Settings, world: int, data_path):
    """``(X, y, X_val, y_val, local_batch)``: the job's samples, split into training and held-out ones
    (the same split on every rank), and a rank's share of a global batch."""
    from qhybrid.qml import load_sonar
    from qhybrid.qml.data import sample

    X, y = sample(*load_sonar(data_path), settings.ndata, seed=settings.seed)
    train_idx, val_idx = split(y, settings.val_fraction, seed=settings.seed)
    local_batch = check_world(settings, world, len(train_idx))
    return X[train_idx], y[train_idx], X[val_idx], y[val_idx], local_batch


def _data_parallel(model, where):
    """``model`` wrapped in DistributedDataParallel (on this rank's GPU when it has one)."""
    from torch.nn.parallel import DistributedDataParallel

    return DistributedDataParallel(model, device_ids=[where.index] if where.type == "cuda" else None)


def _resume(model, optimizer, scheduler, rank: int) -> tuple[dict, int]:
    """``(history, first epoch)``: empty and 1, or restored from the job's latest checkpoint (the model,
    optimizer and scheduler loaded in place; rank 0 says so)."""
    from qhybrid import jobs

    history = {"loss": [], "accuracy": [], "val_loss": [], "val_accuracy": [], "epoch_seconds": []}
    state = jobs.latest_checkpoint(CHECKPOINT_SUFFIX)
    if state is None:
        return history, 1
    state = unplain(state["state"])
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    if rank == 0:
        tail = "" if os.environ.get("AMZN_BRAKET_CHECKPOINT_DIR") else " (standalone run; delete the folder to start over)"
        print(f"qhybrid: resuming after epoch {state['epoch']} from the checkpoint in {jobs.checkpoint_dir()}{tail}",
              flush=True)
    return {**history, **state["history"]}, state["epoch"] + 1


def _add_epoch(history: dict, sums, val_loss, val_acc, seconds: float) -> None:
    """Append an epoch's figures to ``history`` (``sums``: :func:`train_epoch`'s, all ranks')."""
    history["loss"].append(float(sums[0] / sums[2]))
    history["accuracy"].append(float(sums[1] / sums[2]))
    history["val_loss"].append(val_loss)
    history["val_accuracy"].append(val_acc)
    history["epoch_seconds"].append(seconds)


def _log_epoch(epoch: int, history: dict, states: dict) -> None:
    """Rank 0 after an epoch: its metrics (one timestamp: they land in one row) and the checkpoint
    (``states``: the model's, optimizer's and scheduler's state dicts)."""
    from qhybrid import jobs

    stamp = time.time()
    for key, name in (("Loss", "loss"), ("train_accuracy", "accuracy"), ("val_loss", "val_loss"),
                      ("val_accuracy", "val_accuracy"), ("epoch_seconds", "epoch_seconds")):
        jobs.log_metric(key, history[name][-1], timestamp=stamp, iteration_number=epoch)
    jobs.save_job_checkpoint({"state": plain({**states, "epoch": epoch, "history": history})},
                             checkpoint_file_suffix=CHECKPOINT_SUFFIX)


def _result(settings: Settings, history: dict, *, n_train: int, y_val, world: int, device_string: str,
            chunks: dict) -> dict:
    """The job's result: the last epoch's figures, the histories, the sizes and the summary in words."""
    last = (lambda key: history[key][-1] if history.get(key) else None)
    n_val = len(y_val)
    accuracy_ = last("val_accuracy") if n_val else last("accuracy")
    return {"summary": _summary(accuracy_, n_val, n_train, y_val),
            "accuracy": accuracy_, "val_accuracy": last("val_accuracy"), "val_loss": last("val_loss"),
            "train_accuracy": last("accuracy"), "loss": last("loss"),
            "losses": history["loss"], "val_accuracies": history.get("val_accuracy", []),
            "epoch_seconds": history["epoch_seconds"], "n_train": n_train, "n_val": n_val,
            "world_size": world, "device": device_string, "nwires": settings.nwires,
            "ndata": settings.ndata, "batch_size": settings.batch_size, "epochs": settings.epochs,
            "engine_chunk": chunks}


def main() -> dict:
    """Entry point under the job contract."""
    from qhybrid import jobs

    settings = parse_settings(jobs.hyperparameters())
    data = find_data(jobs.input_dir("input-data")) or find_data(jobs.input_dir("input"))
    return train(settings, device_string=jobs.device(), data_path=data)


if __name__ == "__main__":
    main()
