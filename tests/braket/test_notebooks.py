"""Notebooks in the style of Braket's hybrid-job examples 0, 1, 2, 4 and 5 run after an import change.

Each notebook (tests/braket/examples, our own, small sizes) is executed cell by cell
in a fresh ``__main__`` namespace, on lightning.qubit and on our engine: in the default
suite each on one of them (``braketkit.on``: ours where the numbers are checked against a
reference or against each other, lightning where only the launch style is the point), both
under ``make test-all``.
"""
from __future__ import annotations

import numpy as np
import pennylane as qml
import pytest
from pennylane import numpy as pnp

from qhybrid.errors import PersistedDataError

from braketkit import DEVICES, LIGHTNING, QHYBRID_CPU, SONAR, on
from nbkit import run_notebook


def _reference_rotation(steps: int, stepsize: float):
    dev = qml.device("default.qubit", wires=1)

    @qml.qnode(dev)
    def circuit(params):
        qml.RX(params[0], wires=0)
        qml.RY(params[1], wires=0)
        return qml.expval(qml.PauliZ(0))

    opt, params = qml.GradientDescentOptimizer(stepsize=stepsize), pnp.array([0.5, 0.75])
    values = []
    for _ in range(steps):
        params = opt.step(circuit, params)
        values.append(float(circuit(params)))
    return params, values


@pytest.mark.parametrize("device", on(QHYBRID_CPU))
def test_first_job_decorator_cell(example, device, capsys):
    work = example("first_job.ipynb")
    ns = run_notebook(work / "first_job.ipynb", {"device_string": device})
    job = ns["job"]
    assert capsys.readouterr().out.startswith(f"AwsQuantumJob('arn':'local:job/{job.name}')")
    assert job.name.startswith("qubit-rotation-hybrid-job-")
    assert job.spec().hyperparameters == {"num_steps": "5", "stepsize": "0.5"}
    params, expvals = _reference_rotation(5, 0.5)
    assert ns["result"]["result"] == pytest.approx(params, abs=1e-8)
    assert ns["metrics"]["expval"] == pytest.approx(expvals, abs=1e-8)
    assert ns["metrics"]["iteration_number"] == [0, 1, 2, 3, 4]
    with pytest.raises(PersistedDataError, match="allow_pickle=True"):
        job.result()  # pickled, as in Braket's SDK: loading it needs allow_pickle


@pytest.mark.parametrize("simulator", on("qhybrid.cpu", ["lightning.qubit", "qhybrid.cpu"]))  # + the kernel test
def test_qml_notebook_include_modules_and_relative_input(example, simulator):
    work = example("qml")
    ns = run_notebook(work / "qcbm_training.ipynb", {"simulator": simulator})
    job, result = ns["job"], ns["result"]
    assert job.state() == "COMPLETED" and job.spec().device == "local:none/none"
    losses = ns["metrics"]["loss"]
    assert 1 <= len(losses) <= 4 and losses[-1] <= losses[0]
    saved = job.folder / "results" / "final_params.npy"  # written to the working folder: kept with results
    assert saved.is_file() and not (job.folder / "results" / "data.npy").exists()  # input link removed
    assert np.allclose(np.load(saved), result["params"])
    assert len(result["params"]) == 3 * ns["n_layers"] * ns["n_qubits"]


@pytest.mark.parametrize("device", on(LIGHTNING))
def test_pennylane_notebook_checkpoints_and_continued_job(example, device):
    work = example("pennylane_qaoa.ipynb")
    ns = run_notebook(work / "pennylane_qaoa.ipynb", {"device_string": device})
    job, continued = ns["job"], ns["continued_job"]
    assert ns["previous_job_arn"] == f"local:job/{job.name}"
    assert job.spec().instance_type == "ml.m5.xlarge"
    assert ns["metrics"]["iteration_number"] == [0, 1, 2]
    assert ns["continued_result"]["start_iteration"] == 3
    assert ns["continued_metrics"]["iteration_number"] == [3, 4]
    assert continued.spec().copy_checkpoints_from_job == job.name
    assert ns["continued_metrics"]["loss"][-1] <= ns["metrics"]["loss"][0]


@pytest.mark.parametrize("device", on(QHYBRID_CPU))
def test_embedded_simulators_notebook_create_cells(example, device, capsys, caplog):
    work = example("embedded")
    ns = run_notebook(work / "embedded_simulators.ipynb", {"device": device})
    ps, adjoint, local = ns["result_ps"], ns["result_adjoint"], ns["local_result"]
    assert ps["cost"] == pytest.approx(adjoint["cost"], abs=1e-8)  # two gradient methods, one optimisation
    assert np.allclose(ps["params"], adjoint["params"], atol=1e-8, rtol=0)
    assert local == adjoint or local["cost"] == pytest.approx(adjoint["cost"], abs=1e-10)
    assert ns["local_job"].state() == "COMPLETED"  # LocalQuantumJob.create blocked until the end
    out = capsys.readouterr().out
    assert "Metrics - " in out and f"qhybrid: job {ns['local_job'].name} COMPLETED" in out  # it streamed
    assert "image_uri: no local effect" in caplog.text
    assert ns["job"].spec().extra["braket_aws_only"]["image_uri"] == ns["image_uri"]


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
def test_parallelize_training_notebook_single_and_data_parallel(example, device):
    work = example("parallel")
    (work / "data").mkdir()
    (work / "data" / "sonar.all-data").write_text(SONAR.read_text())
    ns = run_notebook(work / "parallelize_training.ipynb", {"device": device})
    assert set(ns["single_result"]) == {"last loss"}
    dp = ns["dp_job"]
    assert ns["dp_result"]["world_size"] == 2 and dp.describe()["world_size"] == 2
    assert (dp.folder / "results" / "model.pt").is_file()
    assert dp.spec().hyperparameters["sagemaker_distributed_dataparallel_enabled"] == "true"


def _in_kernel(path, parameters: dict, show: dict[str, str]) -> dict:
    """Execute a notebook in a real Jupyter kernel (nbclient), parameters injected after the tagged cell;
    return ``{name: value}`` of the ``show`` expressions, printed as JSON by a last cell."""
    import json

    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.read(path, as_version=4)
    at = next(i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
    assign = "\n".join(f"{k} = {v!r}" for k, v in parameters.items())
    nb.cells.insert(at + 1, nbformat.v4.new_code_cell(assign))
    nb.cells.append(nbformat.v4.new_code_cell(
        "import json\nprint(json.dumps({" + ", ".join(f"{k!r}: {e}" for k, e in show.items()) + "}, default=repr))"))
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    return json.loads(nb.cells[-1].outputs[0]["text"])


def test_notebooks_in_a_jupyter_kernel(example):
    """The same notebooks in IPython proper: functions defined in the kernel's __main__, %%time magics;
    on lightning.qubit, so that with the qhybrid.cpu run above the default suite runs it on both."""
    work = example("qml")
    out = _in_kernel(work / "qcbm_training.ipynb", {"simulator": "lightning.qubit"},
                     {"state": "job.state()", "device": "job.spec().device", "keys": "sorted(result)",
                      "losses": "metrics['loss']", "n_params": "len(result['params'])",
                      "kept": "(job.folder / 'results' / 'final_params.npy').is_file()",
                      "input_left": "(job.folder / 'results' / 'data.npy').exists()"})
    losses = out.pop("losses")
    assert out == {"state": "COMPLETED", "device": "local:none/none", "keys": ["params"], "n_params": 9,
                   "kept": True, "input_left": False}
    assert 1 <= len(losses) <= 4 and losses[-1] <= losses[0]
