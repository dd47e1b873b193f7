"""A Braket-style script (environment variables, hand-printed metrics) runs unmodified."""
from __future__ import annotations

import json

import pytest

from qhybrid import Job
from qhybrid.jobs import store

from jobkit import CPU

BRAKET_STYLE = """
    import json, os
    hp = json.load(open(os.environ["AMZN_BRAKET_HP_FILE"]))
    device = os.environ["AMZN_BRAKET_DEVICE_ARN"]
    data = open(os.path.join(os.environ["AMZN_BRAKET_INPUT_DIR"], "input", "x.txt")).read()
    for i in range(int(hp["n"])):
        print(f"Metrics - timestamp=1700000000.{i}; cost={-i * 1.5}; iteration_number={i};")
    with open(os.path.join(os.environ["AMZN_BRAKET_JOB_RESULTS_DIR"], "results.json"), "w") as f:
        json.dump({"braketSchemaHeader": {"name": "braket.jobs_data.persisted_job_data", "version": "1"},
                   "dataDictionary": {"device": device, "data": data,
                                      "job": os.environ["AMZN_BRAKET_JOB_NAME"],
                                      "ckpt": os.environ["AMZN_BRAKET_CHECKPOINT_DIR"]},
                   "dataFormat": "plaintext"}, f)
"""


def test_braket_style_script_runs_unmodified(write_script, tmp_path):
    (tmp_path / "x.txt").write_text("payload")
    job = Job.create("local:pennylane/lightning.qubit", write_script("bk.py", BRAKET_STYLE),
                     hyperparameters={"n": 3}, input_data=tmp_path / "x.txt", job_name="bk").wait(timeout=30)
    result = job.result()
    assert result["device"] == "local:pennylane/lightning.qubit" and result["data"] == "payload"
    assert result["job"] == "bk" and result["ckpt"] == str(store.job_dir("bk") / "checkpoints")
    cols = job.metrics()
    assert cols["cost"] == [0.0, -1.5, -3.0] and cols["iteration_number"] == [0, 1, 2]


def test_script_using_braket_sdk_runs_unmodified(write_script):
    pytest.importorskip("braket.jobs")
    script = write_script("sdk.py", """
        from braket.jobs import save_job_result, save_job_checkpoint, load_job_checkpoint
        from braket.jobs.metrics import log_metric
        from braket.jobs import get_hyperparameters
        log_metric(metric_name="loss", value=0.5, iteration_number=1)
        save_job_checkpoint({"a": 1})
        save_job_result({"hp": get_hyperparameters(), "ck": load_job_checkpoint("sdk-job")})
    """)
    job = Job.create(CPU, script, hyperparameters={"k": 1}, job_name="sdk-job").wait(timeout=60)
    assert job.result() == {"hp": {"k": "1"}, "ck": {"a": 1}}
    assert job.metrics()["loss"] == [0.5]
    assert json.loads((store.job_dir("sdk-job") / "checkpoints" / "sdk-job.json").read_text())["dataFormat"]
