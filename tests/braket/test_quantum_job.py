"""AwsQuantumJob / LocalQuantumJob: Braket's create keywords and job methods, run locally."""
from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
from dataclasses import dataclass

import pytest

from qhybrid.braket import (
    AwsQuantumJob,
    CheckpointConfig,
    InstanceConfig,
    LocalQuantumJob,
    OutputDataConfig,
    PersistedJobDataFormat,
    StoppingCondition,
)
from qhybrid.errors import DeviceError, JobNotFoundError, PersistedDataError, SpecError
from qhybrid.submit import Job

from braketkit import LIGHTNING, QHYBRID_CPU
from jobkit import nothing_written

SAVES = """
    import os, time
    from qhybrid.braket import (get_job_device_arn, get_hyperparameters, save_job_result, save_job_checkpoint,
                                get_checkpoint_dir)
    from qhybrid.braket.metrics import log_metric
    hp = get_hyperparameters()
    for i in range(3):
        log_metric(metric_name="loss", value=1.0 / (i + 1), iteration_number=i)
        log_metric(metric_name="loss", value=5.0, iteration_number=i) if i == 1 else None
    save_job_checkpoint({"step": 3}, checkpoint_file_suffix="last")
    with open(os.path.join(os.environ["AMZN_BRAKET_JOB_RESULTS_DIR"], "extra.txt"), "w") as f:
        f.write("kept")
    time.sleep(float(hp.get("sleep", "0")))
    save_job_result({"device": get_job_device_arn(), "hp": hp}, data_format=hp.get("fmt", "plaintext"))
"""


def _script(tmp_path, body=SAVES, name="saves.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


@pytest.mark.parametrize("device", [LIGHTNING, QHYBRID_CPU])
def test_create_result_metrics_metadata_download(tmp_path, device):
    job = AwsQuantumJob.create(device=device, source_module=str(_script(tmp_path)), job_name="bk-1",
                               hyperparameters={"n": 3}, tags={"team": "q"}, wait_until_complete=True, quiet=True)
    assert job.arn == "local:job/bk-1" and repr(job) == "AwsQuantumJob('arn':'local:job/bk-1')"
    assert job.state() == "COMPLETED"
    assert job.result(poll_timeout_seconds=30, poll_interval_seconds=1) == {"device": device, "hp": {"n": "3"}}
    cols = job.metrics(metric_type="iteration_number", statistic="min")
    assert cols["iteration_number"] == [0, 1, 2] and cols["loss"] == [1.0, 0.5, 1 / 3]
    assert job.metrics()["loss"] != [] and max(job.metrics(metric_type="iteration_number")["loss"]) == 5.0
    from qhybrid.braket.metrics import MetricStatistic, MetricType

    assert job.metrics(metric_type=MetricType.ITERATION_NUMBER, statistic=MetricStatistic.MIN) == cols
    with pytest.raises(SpecError, match="metric_type 'step' is not one of"):
        job.metrics(metric_type="step")
    meta = job.metadata()
    assert meta["jobArn"] == job.arn and meta["status"] == "COMPLETED" and meta["tags"] == {"team": "q"}
    assert meta["deviceConfig"] == {"device": device} and meta["hyperParameters"] == {"n": "3"}
    job.download_result(extract_to=tmp_path / "out")
    assert (tmp_path / "out" / "bk-1" / "extra.txt").read_text() == "kept"
    assert json.loads((tmp_path / "out" / "bk-1" / "results.json").read_text())["dataFormat"] == "plaintext"
    assert AwsQuantumJob("local:job/bk-1") == job == AwsQuantumJob("arn:aws:braket:us-west-2:1234:job/bk-1")
    assert job.cancel() == "COMPLETED"


def test_logs_print_and_wait(tmp_path, capsys):
    job = AwsQuantumJob.create(device=QHYBRID_CPU, source_module=str(_script(tmp_path)), job_name="bk-logs")
    job.logs(wait=True, poll_interval_seconds=1)
    first = capsys.readouterr().out
    assert "Metrics - " in first and "qhybrid: job bk-logs COMPLETED" in first
    assert job.logs() is None and capsys.readouterr().out == job.run_log


def test_pickled_result_needs_allow_pickle(tmp_path):
    job = LocalQuantumJob.create(device=QHYBRID_CPU, source_module=str(_script(tmp_path)), job_name="bk-pk",
                                 hyperparameters={"fmt": "pickled_v4"}, quiet=True)
    with pytest.raises(PersistedDataError, match="pickled.*allow_pickle=True"):
        job.result()
    with pytest.raises(RuntimeError, match="allow_pickle=True"):  # what Braket's SDK raises there
        job.result()
    assert job.result(allow_pickle=True)["device"] == QHYBRID_CPU


def test_local_create_blocks_and_streams(tmp_path, capsys):
    job = LocalQuantumJob.create(QHYBRID_CPU, str(_script(tmp_path)), job_name="bk-local")
    assert job.state() == "COMPLETED"
    out = capsys.readouterr().out
    assert "qhybrid: job bk-local running" in out and "Metrics - " in out and "COMPLETED after" in out
    quiet = LocalQuantumJob.create(QHYBRID_CPU, str(_script(tmp_path)), job_name="bk-quiet", quiet=True)
    assert quiet.state() == "COMPLETED" and capsys.readouterr().out == ""


def test_aws_only_keywords_recorded_with_one_notice(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="qhybrid.braket")
    job = AwsQuantumJob.create(
        device=QHYBRID_CPU, source_module=str(_script(tmp_path)), job_name="bk-aws",
        image_uri="123.dkr.ecr/img:1", role_arn="arn:aws:iam::1:role/x", code_location="s3://b/code",
        aws_session=object(), reservation_arn="arn:aws:braket:us-east-1:1:reservation/r",
        output_data_config=OutputDataConfig(s3Path="s3://b/out"), wait_until_complete=True, quiet=False,
    )
    notices = [r.getMessage() for r in caplog.records if "no local effect" in r.getMessage()]
    assert len(notices) == 1
    assert notices[0].startswith("qhybrid: aws_session, code_location, image_uri, output_data_config.s3Path")
    recorded = job.spec().extra["braket_aws_only"]
    assert recorded["image_uri"] == "123.dkr.ecr/img:1" and recorded["code_location"] == "s3://b/code"
    assert job.state() == "COMPLETED"


def test_local_keywords_honoured(tmp_path):
    out, ckpt = tmp_path / "outputs", tmp_path / "ckpts"
    job = LocalQuantumJob.create(
        device=QHYBRID_CPU, source_module=str(_script(tmp_path)), job_name="bk-cfg", quiet=True,
        output_data_config=OutputDataConfig(s3Path=str(out)), checkpoint_config=CheckpointConfig(localPath=str(ckpt)),
        instance_config=InstanceConfig(instanceType="ml.m5.xlarge"),
    )
    assert (out / "bk-cfg" / "results.json").is_file() and (out / "bk-cfg" / "extra.txt").is_file()
    assert json.loads((ckpt / "bk-cfg_last.json").read_text())["dataDictionary"] == {"step": 3}
    assert job.spec().instance_type == "ml.m5.xlarge"
    slow = LocalQuantumJob.create(device=QHYBRID_CPU, source_module=str(_script(tmp_path)), job_name="bk-slow",
                                  hyperparameters={"sleep": 30}, stopping_condition=StoppingCondition(2), quiet=True)
    assert slow.state() == "FAILED" and "max_runtime of 2 s exceeded" in slow.describe()["failure_reason"]


def test_braket_sdk_config_objects_accepted_by_attribute(tmp_path):
    @dataclass
    class SdkInstanceConfig:  # the SDK's own dataclass has these fields
        instanceType: str = "ml.m5.large"
        volumeSizeInGb: int = 30
        instanceCount: int = 1

    job = AwsQuantumJob.create(device=QHYBRID_CPU, source_module=str(_script(tmp_path)), job_name="bk-sdkcfg",
                               instance_config=SdkInstanceConfig(instanceType="ml.m5.2xlarge"))
    assert job.spec().instance_type == "ml.m5.2xlarge"
    assert PersistedJobDataFormat.PICKLED_V4.value == "pickled_v4"


def test_copy_checkpoints_from_job_arn_and_cli(tmp_path):
    first = LocalQuantumJob.create(QHYBRID_CPU, str(_script(tmp_path)), job_name="bk-first", quiet=True)
    reads = _script(tmp_path, """
        from qhybrid.braket import load_job_checkpoint, save_job_result
        save_job_result(load_job_checkpoint("bk-first", "last"))
    """, name="reads.py")
    second = LocalQuantumJob.create(QHYBRID_CPU, str(reads), job_name="bk-second", quiet=True,
                                    copy_checkpoints_from_job=first.arn)
    assert second.result() == {"step": 3}
    cli = [sys.executable, "-m", "qhybrid", "run", str(reads), "--name", "bk-third", "--checkpoints-from",
           "arn:aws:braket:us-west-2:123456789012:job/bk-first", "--tag", "stage=3", "--json"]
    done = subprocess.run(cli, capture_output=True, text=True, timeout=120)
    assert json.loads(done.stdout)["result"] == {"step": 3}, done.stderr
    listed = subprocess.run([sys.executable, "-m", "qhybrid", "jobs", "list", "--tag", "stage=3", "--json"],
                            capture_output=True, text=True, timeout=60)
    assert [r["name"] for r in json.loads(listed.stdout)] == ["bk-third"]
    shown = subprocess.run([sys.executable, "-m", "qhybrid", "jobs", "show", "bk-third"],
                           capture_output=True, text=True, timeout=60).stdout
    rows = [line.split(None, 1) for line in shown.splitlines()]
    assert ["tags", "stage=3"] in rows and ["dependencies", "the caller's interpreter"] in rows, shown
    assert [j.name for j in Job.list(tags={"stage": "3"})] == ["bk-third"]


def test_device_strings_pass_through(tmp_path):
    echo = _script(tmp_path, """
        import os
        from qhybrid.braket import save_job_result
        save_job_result({"device": os.environ["AMZN_BRAKET_DEVICE_ARN"]})
    """, name="echo.py")
    import enum

    class Amazon(str, enum.Enum):  # the shape of braket.devices.Devices.Amazon
        SV1 = "arn:aws:braket:::device/quantum-simulator/amazon/sv1"

    for device, seen in [("local:braket/braket.local.qubit", "local:braket/braket.local.qubit"),
                         (Amazon.SV1, Amazon.SV1.value),
                         ("arn:aws:braket:::device/quantum-simulator/amazon/sv1",
                          "arn:aws:braket:::device/quantum-simulator/amazon/sv1"),
                         (None, "local:none/none")]:
        job = AwsQuantumJob.create(device=device, source_module=str(echo), wait_until_complete=True, quiet=True)
        assert job.result() == {"device": seen}


def test_module_function_entry_point_receives_hyperparameters(example):
    work = example("embedded")
    job = LocalQuantumJob.create(QHYBRID_CPU, str(work / "qaoa"), entry_point="qaoa.run_with_kwargs:start_here",
                                 hyperparameters={"n_nodes": 4, "seed": 1}, quiet=True)
    assert job.result() == {"n_nodes": "4", "stepsize": "0.5", "others": {"seed": "1"}, "device": QHYBRID_CPU}


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"device": "local:pennylane/lightning.qbit"}, DeviceError, "did you mean 'lightning.qubit'"),
    ({"device": "local:qhybrid/qhybrid.cpux"}, DeviceError, "unknown qhybrid simulator 'qhybrid.cpux'"),
    ({"input_data": "s3://bucket/data"}, SpecError, "channel 'input' is on S3"),
    ({"instance_config": "ml.m5.large"}, SpecError, "instance_config must be an InstanceConfig, got str"),
    ({"stopping_condition": 30}, SpecError, "stopping_condition must be a StoppingCondition, got int"),
    ({"tags": {"a": 1}}, SpecError, "bad key\\(s\\): 'a'"),
    ({"copy_checkpoints_from_job": "local:job/none-such"}, SpecError, "no job named 'none-such'"),
])
def test_bad_input_one_line_nothing_written(tmp_path, home, kwargs, exc, match):
    args = {"device": QHYBRID_CPU, "source_module": str(_script(tmp_path)), **kwargs}
    with pytest.raises(exc, match=match) as info:
        AwsQuantumJob.create(**args)
    assert "\n" not in str(info.value) and isinstance(info.value, ValueError)
    assert nothing_written(home)


def test_unknown_arn_is_not_found():
    with pytest.raises(JobNotFoundError):
        AwsQuantumJob("local:job/never-made")


def test_script_importing_braket_names_the_extra(tmp_path):
    import importlib.util

    if importlib.util.find_spec("braket.jobs") is not None:  # (tests/braket itself is no SDK)
        pytest.skip("the Braket SDK is installed")
    script = _script(tmp_path, "from braket.jobs import save_job_result\n", name="needs_sdk.py")
    job = LocalQuantumJob.create(QHYBRID_CPU, str(script), quiet=True)
    reason = job.describe()["failure_reason"]
    assert job.state() == "FAILED" and "No module named 'braket'" in reason
    assert "pip install 'qhybrid[braket]'" in reason


def test_requirements_in_source_and_jobs_found_again_by_arn(tmp_path):
    """Notebook 6's pattern: a source folder with a requirements.txt; results read back through the ARNs."""
    from jobkit import make_wheel

    wheels = make_wheel(tmp_path / "wheels").parent
    src = tmp_path / "source_scripts"
    src.mkdir()
    (src / "__init__.py").write_text("")
    (src / "requirements.txt").write_text(f"--no-index\n--find-links {wheels}\nqhtinypkg==1.0\n")
    (src / "bench.py").write_text("import qhtinypkg\nfrom qhybrid.braket import save_job_result, get_hyperparameters\n"
                                  "save_job_result({'v': qhtinypkg.VERSION, **get_hyperparameters()})\n")
    arns = [LocalQuantumJob.create(device=LIGHTNING, source_module=str(src), entry_point="source_scripts.bench",
                                   hyperparameters={"seed": s},
                                   instance_config=InstanceConfig(instanceType="ml.m5.large", volumeSizeInGb=30,
                                                                  instanceCount=1), quiet=True).arn
            for s in (1, 2)]
    assert [AwsQuantumJob(arn).result() for arn in arns] == [{"v": "1.0", "seed": "1"}, {"v": "1.0", "seed": "2"}]
    envs = {AwsQuantumJob(arn).describe()["environment"] for arn in arns}
    assert len(envs) == 1 and None not in envs
