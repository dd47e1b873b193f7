"""The DressedQNN training job: settings, single process, data parallel, failures, resume, CLI."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

import qhybrid.workloads.qml as workload
from qhybrid.errors import SpecError
from qhybrid.jobs import store
from qhybrid.jobs.script import STARTED_MARK
from qhybrid.submit import Job

CPU = "local:qhybrid/qhybrid.cpu"
SCRIPT = str(Path(workload.__file__))
SMALL = {"nwires": "4", "ndata": "24", "batch_size": "8", "epochs": "3", "lr": "0.05", "seed": "11"}


@pytest.fixture(autouse=True)
def _restore_threads():
    """In-process jobs set torch's and numba's thread counts; give the session its own back."""
    threads = torch.get_num_threads()
    try:
        import numba

        numba_threads = numba.get_num_threads()
    except ImportError:  # pragma: no cover
        numba = None
    yield
    torch.set_num_threads(threads)
    if numba is not None:
        numba.set_num_threads(numba_threads)


def _job(hp, **kwargs):
    return Job.create(CPU, SCRIPT, entry_point="qml", hyperparameters=hp, **kwargs)


def test_settings_defaults_and_validation():
    s = workload.parse_settings({"sagemaker_distributed_dataparallel_enabled": "true"})
    assert (s.nwires, s.ndata, s.batch_size, s.dtype) == (10, 208, 16, "complex128")
    for hp, words in [({"nwires": "3"}, "control and target on one wire"), ({"ndata": "300"}, "between 1 and 208"),
                      ({"lr": "fast"}, "not a number"), ({"epochs": "1.5"}, "not an integer"),
                      ({"dtype": "float16"}, "complex128, complex64"), ({"nwire": "4"}, "unknown")]:
        with pytest.raises(SpecError, match=words):
            workload.parse_settings(hp)


def test_world_size_must_divide_batch_and_data():
    s = workload.parse_settings({"batch_size": "8", "ndata": "24"})
    assert workload.check_world(s, 2) == 4
    with pytest.raises(SpecError, match="batch_size=8 is not divisible by the 3"):
        workload.check_world(s, 3)
    with pytest.raises(SpecError, match="ndata=24 is not divisible by the 5"):
        workload.check_world(workload.parse_settings({"batch_size": "10", "ndata": "24"}), 5)


def test_split_is_seeded_stratified_and_disjoint():
    y = torch.tensor([1.0] * 30 + [-1.0] * 10)
    train, val = workload.split(y, 0.2, seed=3)
    assert len(val) == 8 and sorted(train + val) == list(range(40))
    assert sum(1 for i in val if y[i] > 0) == 6  # 3:1 as in the data
    assert sum(1 for i in workload.split(y, 0.25, seed=3)[1] if y[i] > 0) in (7, 8)  # 7.5 + 2.5: remainders
    assert workload.split(y, 0.2, seed=3) == (train, val) and workload.split(y, 0.2, seed=4)[1] != val
    assert workload.split(y, 0.0, seed=3) == (list(range(40)), [])


def test_training_count_must_divide_among_processes():
    s = workload.parse_settings({"batch_size": "8", "ndata": "24"})
    with pytest.raises(SpecError, match="the 17 training samples"):
        workload.check_world(s, 2, 17)


def test_find_data_prefers_sonar_all_data(tmp_path):
    assert workload.find_data(tmp_path / "missing") is None
    (tmp_path / "other.csv").write_text("x")
    assert workload.find_data(tmp_path).name == "other.csv"
    (tmp_path / "sonar.all-data").write_text("x")
    assert workload.find_data(tmp_path).name == "sonar.all-data"


def test_single_process_job_logs_saves_and_checkpoints():
    job = _job(SMALL, in_process=True)
    assert job.state() == "COMPLETED", job.describe()["failure_reason"]
    result = job.result()
    assert result["world_size"] == 1 and result["device"] == CPU
    assert len(result["epoch_seconds"]) == 3 and result["loss"] == result["losses"][-1]
    assert 0.0 <= result["accuracy"] <= 1.0 and result["accuracy"] == result["val_accuracy"]
    assert (result["n_train"], result["n_val"]) == (18, 6) and "validation accuracy" in result["summary"]
    metrics = job.metrics(metric_type="iteration_number")
    assert metrics["iteration_number"] == [1, 2, 3] and metrics["Loss"] == result["losses"]
    assert metrics["val_accuracy"] == result["val_accuracies"] and metrics["val_accuracy"][-1] == result["accuracy"]
    assert len(metrics["train_accuracy"]) == 3 and len(metrics["epoch_seconds"]) == 3
    assert "Accuracy" not in metrics
    lines = job.logs().splitlines()
    marks = [line for line in lines if line.startswith(STARTED_MARK)]
    assert marks == [f"{STARTED_MARK}training epoch 1 of 3 (18 samples; metrics at its end)"]
    assert lines.index(marks[0]) < next(i for i, line in enumerate(lines) if "Metrics -" in line)
    folder = store.job_dir(job.name)
    state = torch.load(folder / "results" / "model.pt")
    assert set(state) >= {"qlayer.w_layer1", "qlayer.w_layer2", "qlayer.rotation", "input_layer.weight"}
    assert (folder / "checkpoints" / f"{job.name}_qml.json").exists()


def test_chunked_job_follows_the_unchunked_trajectory():
    """max_batch_states cuts every batch into engine calls of at most that many samples: same run."""
    whole = _job({**SMALL, "epochs": "2"}, in_process=True).result()
    chunked = _job({**SMALL, "epochs": "2", "max_batch_states": "3"}, in_process=True).result()
    assert whole["engine_chunk"] == {"train": 8, "eval": 6} and chunked["engine_chunk"] == {"train": 3, "eval": 3}
    torch.testing.assert_close(torch.tensor(chunked["losses"]), torch.tensor(whole["losses"]), atol=1e-12, rtol=0)
    assert chunked["val_loss"] == pytest.approx(whole["val_loss"], abs=1e-12)


def test_preflight_names_the_size_the_memory_per_sample_and_what_is_free():
    from qhybrid.errors import MemoryLimitError

    settings = workload.parse_settings({"nwires": "26", "ndata": "16"})
    assert workload.preflight(settings, available=24 << 30) == 2  # 2 GiB a sample, CHUNK_BYTES 4 GiB
    assert workload.preflight(settings, available=5 << 30) == 2  # 80 % of 5 GiB
    assert workload.preflight(settings, available=5 << 30, processes=2) == 1  # the other rank holds half
    with pytest.raises(MemoryLimitError, match=r"^26 wires \(complex128\) need 2.00 GiB per sample .*"
                                               r"only 2.00 GiB is free on cpu"):
        workload.preflight(settings, available=2 << 30)
    with pytest.raises(SpecError, match="max_batch_states"):
        workload.parse_settings({"max_batch_states": "-1"})


def test_input_channel_is_read(tmp_path):
    from qhybrid.qml.data import load_sonar

    X, y = load_sonar()
    rows = [",".join(f"{v:.4f}" for v in x) + ("," + ("M" if label > 0 else "R")) for x, label in zip(X, y)]
    rows[0] = rows[0].rsplit(",", 1)[0] + ",Q"  # a bad label proves this file was read
    (tmp_path / "sonar.all-data").write_text("\n".join(rows))
    job = _job(SMALL, in_process=True, input_data={"input-data": str(tmp_path)})
    assert job.state() == "FAILED"
    assert "label 'Q'" in job.describe()["failure_reason"]


def test_resume_from_checkpoint_continues_the_same_trajectory():
    straight = _job({**SMALL, "epochs": "4"}, in_process=True).result()["losses"]
    first = _job({**SMALL, "epochs": "2"}, in_process=True)
    resumed = _job({**SMALL, "epochs": "4"}, in_process=True, copy_checkpoints_from_job=first.name)
    assert "resuming after epoch 2" in resumed.logs()
    result = resumed.result()
    assert result["losses"][:2] == first.result()["losses"]
    assert resumed.metrics(metric_type="iteration_number")["iteration_number"] == [3, 4]
    torch.testing.assert_close(torch.tensor(result["losses"]), torch.tensor(straight), atol=1e-12, rtol=0)


def test_data_parallel_job_follows_single_process_and_only_rank_0_writes():
    single = _job(SMALL, in_process=True).result()
    job = _job(SMALL, distribution="data_parallel", processes_per_instance=2).wait(timeout=120)
    assert job.state() == "COMPLETED", job.describe()["failure_reason"]
    result = job.result()
    assert result["world_size"] == 2
    torch.testing.assert_close(torch.tensor(result["losses"]), torch.tensor(single["losses"]),
                               atol=1e-10, rtol=0)
    assert result["accuracy"] == single["accuracy"]  # the held-out samples shared out between the ranks
    assert result["val_loss"] == pytest.approx(single["val_loss"], abs=1e-12)
    assert result["val_accuracies"] == single["val_accuracies"]
    assert job.metrics(metric_type="iteration_number")["Loss"] == result["losses"]
    assert not job.metrics(rank=1)  # rank 1 logged nothing
    checkpoints = list((store.job_dir(job.name) / "checkpoints").iterdir())
    assert [p.name for p in checkpoints] == [f"{job.name}_qml.json"]


def test_a_failing_rank_fails_the_job():
    hp = {**SMALL, "epochs": "2", "fail_rank": "1"}
    job = _job(hp, distribution="data_parallel", processes_per_instance=2).wait(timeout=120)
    assert job.state() == "FAILED"
    reason = job.describe()["failure_reason"]
    assert "rank 1" in reason and "fault injected" in reason


def test_indivisible_batch_fails_with_a_clear_reason():
    job = _job({**SMALL, "batch_size": "7"}, distribution="data_parallel", processes_per_instance=2)
    job.wait(timeout=120)
    assert job.state() == "FAILED"
    assert "batch_size=7 is not divisible by the 2" in job.describe()["failure_reason"]


def test_pennylane_device_trains_the_same_model():
    hp = {**SMALL, "epochs": "2", "ndata": "16"}
    ours = _job(hp, in_process=True).result()
    peer = Job.create("local:pennylane/default.qubit", SCRIPT, entry_point="qml", hyperparameters=hp,
                      in_process=True)
    result = peer.result()
    assert result["device"] == "local:pennylane/default.qubit"
    torch.testing.assert_close(torch.tensor(result["losses"]), torch.tensor(ours["losses"]), atol=1e-8, rtol=0)


def test_checkpoint_values_round_trip_exactly_as_plain_json():
    import json

    import torch

    from qhybrid.workloads.qml import plain, unplain

    model = torch.nn.Linear(3, 2).double()
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    model(torch.randn(4, 3, dtype=torch.float64)).sum().backward()
    opt.step()
    state = {"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3,
             "z": torch.tensor([1 + 2j, -0.5j], dtype=torch.complex128), "t": (1, "a")}
    back = unplain(json.loads(json.dumps(plain(state))))
    assert back["epoch"] == 3 and back["t"] == (1, "a") and torch.equal(back["z"], state["z"])
    for k, v in state["model"].items():
        assert torch.equal(back["model"][k], v) and back["model"][k].dtype == v.dtype
    saved = state["optimizer"]["state"]
    assert set(back["optimizer"]["state"]) == set(saved) and all(isinstance(k, int) for k in saved)
    for k in saved:
        for name, v in saved[k].items():
            assert torch.equal(back["optimizer"]["state"][k][name], v)
    assert back["optimizer"]["param_groups"] == state["optimizer"]["param_groups"]


def test_train_step_and_epoch_are_the_jobs_loop():
    """train_step returns [loss sum, correct, count] of the batch before its update and steps the optimizer;
    train_epoch sums them over the loader (what train() logs as Loss and train_accuracy)."""
    from qhybrid.qml import DressedQNN, accuracy, margin_loss

    model = DressedQNN(4, generator=torch.Generator().manual_seed(0))
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    x = torch.rand(6, 60, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    y = torch.tensor([1.0, -1.0, 1.0, -1.0, 1.0, 1.0], dtype=torch.float64)
    with torch.no_grad():
        scores = model(x)
    sums = workload.train_step(model, opt, x, y)
    assert sums.tolist() == pytest.approx([float(margin_loss(scores, y)) * 6, accuracy(scores, y) * 6, 6])
    with torch.no_grad():
        assert not torch.equal(model(x), scores)  # the parameters moved
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=4)
    assert workload.train_epoch(model, opt, loader, torch.device("cpu"))[2] == 6 and model.training


def test_set_threads_gives_the_engine_the_threads_and_torch_one():
    import numba

    torch.set_num_threads(2)
    workload.set_threads("local:pennylane/lightning.qubit")  # PennyLane devices: left as they are
    assert torch.get_num_threads() == 2
    workload.set_threads(CPU)
    assert torch.get_num_threads() == 1 and numba.get_num_threads() == min(2, numba.config.NUMBA_NUM_THREADS)


def test_a_rank_past_the_last_held_out_sample_adds_nothing():
    """evaluate()'s shares without processes: the ranks' sums, put together, are the whole set's."""
    from unittest import mock

    from qhybrid.workloads.qml import evaluate

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 1, dtype=torch.float64), torch.nn.Flatten(0))
    X, y = torch.rand(3, 5, dtype=torch.float64), torch.tensor([1.0, -1.0, 1.0], dtype=torch.float64)
    whole = evaluate(model, X, y, torch.device("cpu"))
    shares = []

    def keep(totals):
        shares.append(totals.clone())

    with mock.patch("torch.distributed.all_reduce", side_effect=keep), \
            mock.patch("torch.distributed.get_backend", return_value="gloo"):
        for rank in range(4):  # 4 ranks, 3 samples: rank 3 evaluates none
            evaluate(model, X, y, torch.device("cpu"), world=4, rank=rank)
    assert shares[3].tolist() == [0.0, 0.0, 0.0]
    loss, hits, count = sum(shares).tolist()
    assert count == 3 and (loss / count, hits / count) == pytest.approx(whole, abs=1e-15)
