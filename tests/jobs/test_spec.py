"""Bad input is rejected with a ValueError subclass before anything is written."""
from __future__ import annotations

import pytest

from qhybrid import InstanceConfig, Job
from qhybrid.errors import DeviceError, InstanceError, SpecError

from jobkit import CPU, FULL_SCRIPT, nothing_written


@pytest.fixture
def script(write_script):
    return write_script("full.py", FULL_SCRIPT)


def _rejected(home, exc, match, **kwargs):
    with pytest.raises(exc, match=match) as info:
        Job.create(**kwargs)
    assert isinstance(info.value, ValueError) and "\n" not in str(info.value)
    assert nothing_written(home)


def test_malformed_device(home, script):
    _rejected(home, DeviceError, "not of the form 'local:<provider>/<name>'.*local:qhybrid/qhybrid.cpu",
              device="qhybrid.cpu", source_module=script)


@pytest.mark.parametrize("device", ["", "   "])
def test_empty_device_is_refused_in_one_line(home, script, device):
    _rejected(home, DeviceError, f"device {device!r} is not of the form 'local:<provider>/<name>'", device=device,
              source_module=script)


@pytest.mark.parametrize("config", [
    lambda: InstanceConfig(instanceType=None),
    lambda: type("BraketConfig", (), {"instanceType": None, "instanceCount": 1})(),  # a duck-typed SDK config
])
def test_an_instance_type_of_none_is_refused_before_anything_is_written(home, script, config):
    with pytest.raises(InstanceError, match="instanceType must be an instance type name like 'ml.m5.large', "
                                            "got None") as info:
        Job.create(CPU, script, instance_config=config())
    assert "\n" not in str(info.value) and nothing_written(home)


def test_unknown_provider(home, script):
    _rejected(home, DeviceError, "unknown device provider 'braket2'.*qhybrid, pennylane",
              device="local:braket2/sv1", source_module=script)


def test_unknown_simulator(home, script):
    _rejected(home, DeviceError, "unknown pennylane simulator 'lightning.qbit'.*did you mean 'lightning.qubit'",
              device="local:pennylane/lightning.qbit", source_module=script)


def test_unknown_instance_type(home, script):
    with pytest.raises(InstanceError, match="unknown instance type 'ml.m5.larg'; did you mean 'ml.m5.large'"):
        Job.create(CPU, script, instance_config=InstanceConfig(instanceType="ml.m5.larg"))
    assert nothing_written(home)


def test_bad_instance_count(home, script):
    with pytest.raises(InstanceError, match="instanceCount must be an integer >= 1"):
        InstanceConfig(instanceCount=0)


def test_missing_source(home, tmp_path):
    _rejected(home, SpecError, "source module .*nope.py' does not exist", device=CPU,
              source_module=tmp_path / "nope.py")


def test_missing_entry_point_module(home, script):
    _rejected(home, SpecError, "entry point module 'other' not found", device=CPU, source_module=script,
              entry_point="other")


def test_missing_entry_point_function(home, script):
    _rejected(home, SpecError, "entry point function 'main' not found", device=CPU, source_module=script,
              entry_point="full:main")


def test_hyperparameters_stringified_as_braket_does(script):
    from pathlib import Path

    import numpy as np

    from qhybrid.jobs.spec import check_hyperparameters

    hp = check_hyperparameters({"n": np.int64(3), "x": np.float32(0.5), "p": Path("/a/b"), 4: [1, 2]})
    assert hp == {"n": "3", "x": "0.5", "p": "/a/b", "4": "[1, 2]"}


def test_missing_input_path(home, script, tmp_path):
    _rejected(home, SpecError, "input path .* for channel 'data' does not exist", device=CPU,
              source_module=script, input_data={"data": tmp_path / "missing"})


@pytest.mark.parametrize("name", ["../escape", "a/b", "x" * 51, "-lead", "with space", ""])
def test_invalid_job_name(home, script, name):
    _rejected(home, SpecError, "invalid job name", device=CPU, source_module=script, job_name=name)


def test_duplicate_job_name(home, script):
    Job.create(CPU, script, job_name="twice", in_process=True)
    with pytest.raises(SpecError, match="job name 'twice' is already taken"):
        Job.create(CPU, script, job_name="twice")
    assert [j.name for j in Job.list()] == ["twice"]
    assert sorted(p.name for p in (home / "jobs").iterdir()) == ["twice"]


@pytest.mark.parametrize("device", ["local:qhybrid/qhybrid.gpu", "local:pennylane/lightning.gpu"])
def test_gpu_device_on_cpu_instance(home, script, device, monkeypatch):
    import qhybrid.devices as devices

    real = devices.available_devices
    monkeypatch.setattr(devices, "available_devices",
                        lambda: {**real(), "pennylane": real()["pennylane"] + ["lightning.gpu"]})
    _rejected(home, InstanceError, "needs a GPU but instance type 'ml.m5.large' has none", device=device,
              source_module=script)


def test_unknown_checkpoint_job(home, script):
    _rejected(home, SpecError, "no job named 'earlier'", device=CPU, source_module=script,
              copy_checkpoints_from_job="earlier")


def test_max_cost_needs_a_known_price(home, script):
    _rejected(home, SpecError, "max_cost needs a price for 'ml.c5n.xlarge'", device=CPU, source_module=script,
              max_cost=1.0, instance_config=InstanceConfig(instanceType="ml.c5n.xlarge"))


def test_bad_distribution(home, script):
    _rejected(home, SpecError, "distribution 'model_parallel'", device=CPU, source_module=script,
              distribution="model_parallel")


def test_generated_names_are_valid_and_unique(script):
    a, b = (Job.create(CPU, script, in_process=True) for _ in range(2))
    assert a.name != b.name and a.name.startswith("qhybrid-full-") and len(a.name) <= 50


def test_package_without_main_needs_a_module(home, tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "run.py").write_text("print(1)\n")
    _rejected(home, SpecError, "entry point module 'pkg' not found.*pkg.run", device=CPU, source_module=pkg)


# -- numbers, types and sizes: one line, nothing written ---------------------------------------
@pytest.mark.parametrize("key", ["max_runtime", "max_cost"])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), 0, -1.0, "soon", True])
def test_limits_must_be_positive_finite_numbers(home, script, key, value):
    _rejected(home, SpecError, f"{key} must be", device=CPU, source_module=script,
              instance_config=InstanceConfig(instanceType="ml.m5.2xlarge"), **{key: value})


@pytest.mark.parametrize("value", [2.7, 0, -2, "2", True])
def test_processes_per_instance_is_a_positive_integer(home, script, value):
    _rejected(home, SpecError, "processes_per_instance must be a positive", device=CPU, source_module=script,
              distribution="data_parallel", processes_per_instance=value)


def test_world_size_is_bounded_by_the_backend(home, script):
    _rejected(home, SpecError, "processes; the local backend places at most", device=CPU, source_module=script,
              distribution="data_parallel", processes_per_instance=10**9)
    with pytest.raises(InstanceError, match="instanceCount must be at most"):
        InstanceConfig(instanceCount=10**9)


def test_hyperparameters_are_capped(home, script):
    _rejected(home, SpecError, "more than the 1,048,576 allowed", device=CPU, source_module=script,
              hyperparameters={"blob": "x" * (1 << 20)})


def test_hyperparameters_are_stored_once(home, script):
    job = Job.create(CPU, script, hyperparameters={"steps": 2}, in_process=True)
    assert '"steps"' not in (job.folder / "spec.json").read_text()
    assert job.spec().hyperparameters == {"steps": "2"} and job.describe()["hyperparameters"] == {"steps": "2"}


@pytest.mark.parametrize("kwargs, match", [
    ({"source_module": None}, "source_module must be a path.*None"),
    ({"entry_point": 5}, "entry_point must be a string.*5"),
    ({"input_data": {"a": None}}, "input path for channel 'a' must be a path, got None"),
    ({"input_data": 3.5}, "input_data must be a path or a dict"),
    ({"device": 5}, "device must be a string.*5"),  # None is Braket's "no device" (local:none/none)
    ({"job_name": "name\n"}, "invalid job name"),
    ({"input_data": {"data\n": "."}}, "invalid input channel name"),
])
def test_api_type_errors_are_qhybrid_errors_naming_the_value(home, script, kwargs, match):
    args = {"device": CPU, "source_module": script, **kwargs}
    _rejected(home, SpecError, match, **args)


def _price(tmp_path, monkeypatch, value):
    prices = tmp_path / "prices.toml"
    prices.write_text(f'[prices]\n"ml.c5.xlarge" = {value}\n')
    monkeypatch.setenv("QHYBRID_PRICES", str(prices))


@pytest.mark.parametrize("value", ["nan", "inf", "0"])
def test_prices_must_be_positive_finite(home, script, tmp_path, monkeypatch, value):
    _price(tmp_path, monkeypatch, value)
    with pytest.raises(InstanceError, match="price of 'ml.c5.xlarge'") as info:  # the price file is read at once
        Job.create(device=CPU, source_module=script, instance_config=InstanceConfig(instanceType="ml.c5.xlarge"))
    assert isinstance(info.value, ValueError) and "\n" not in str(info.value)
    assert nothing_written(home)


def test_max_cost_below_one_billed_second(home, script, tmp_path, monkeypatch):
    _price(tmp_path, monkeypatch, "60.0")  # 1 USD per second
    _rejected(home, SpecError, "less than one billed second", device=CPU, source_module=script,
              instance_config=InstanceConfig(instanceType="ml.c5.xlarge"), max_cost=0.5)


def test_prices_are_frozen_into_the_spec(home, script, tmp_path, monkeypatch):
    _price(tmp_path, monkeypatch, "60.0")
    job = Job.create(CPU, script, instance_config=InstanceConfig(instanceType="ml.c5.xlarge"), in_process=True)
    assert job.spec().instance["usd_per_minute"] == 60.0
    _price(tmp_path, monkeypatch, "6.0")
    assert job.describe()["price_usd_per_minute"] == 60.0
