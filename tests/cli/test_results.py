"""Results for people: key metrics, plots (opened and checked), compare, on real QAOA jobs."""
from __future__ import annotations

from pathlib import Path

import pytest

import qhybrid.workloads.qaoa as workload
from qhybrid.cli import results
from qhybrid.submit import Job

SOURCE = str(Path(workload.__file__))


def _qaoa(name, **hp):
    return Job.create(device="local:qhybrid/qhybrid.cpu", source_module=SOURCE, entry_point="qaoa", job_name=name,
                      hyperparameters={"n_nodes": "6", "n_edges": "8", "seed": "3", **hp},
                      in_process=True)


@pytest.fixture(scope="module")
def _two_jobs_home(tmp_path_factory):
    """Two real QAOA jobs, run once for the module's read-only tests."""
    home = tmp_path_factory.mktemp("plot-home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("QHYBRID_HOME", str(home))
        _qaoa("plot-a", iterations="6")
        _qaoa("plot-b", iterations="6", stepsize="0.1")
    return home


@pytest.fixture
def two_jobs(_two_jobs_home, monkeypatch):
    monkeypatch.setenv("QHYBRID_HOME", str(_two_jobs_home))
    return [Job.get("plot-a"), Job.get("plot-b")]


def test_figure_has_what_a_reader_needs(two_jobs):
    import matplotlib.pyplot as plt

    fig = results.figure(two_jobs)
    labels = [ax.get_ylabel() for ax in fig.axes]
    assert labels == ["energy", "iteration_seconds (s)"]
    energy, seconds = fig.axes
    assert [line.get_label() for line in energy.lines][:2] == ["plot-a", "plot-b"]
    optimum = two_jobs[0].result()["optimum"]
    flat = [line for line in energy.lines if line.get_label().startswith("optimum")]
    assert len(flat) == 1 and set(flat[0].get_ydata()) == {optimum}
    xs = seconds.lines[0].get_xdata()
    assert list(xs) == [1, 2, 3, 4, 5]  # the first (compiling) iteration left out of the time panel
    ticks = [t for t in seconds.get_xticks() if 0 <= t <= 5]
    assert ticks and all(float(t).is_integer() for t in ticks)
    title = fig._suptitle.get_text()
    assert "qhybrid.cpu on ml.m5.large" in title and "n_nodes=6" in title and "iterations=6" in title
    assert any("first iteration left out" in t.get_text() for t in fig.texts)
    plt.close(fig)


def test_plot_png_opens(two_jobs, tmp_path, cli):
    import matplotlib.image as mpimg

    out = tmp_path / "overlay.png"
    result = cli("jobs", "metrics", "plot-a", "plot-b", "--plot", out, "--json")
    assert result.exit_code == 0, result.stderr
    assert f"wrote {out}" in result.stderr
    image = mpimg.imread(out)
    assert image.shape[1] == 880 and image.shape[0] > 400  # 8 in x 110 dpi
    assert image[..., :3].std() > 0.05  # not blank
    one = tmp_path / "one.png"
    assert cli("jobs", "metrics", "plot-a", "--plot", one).exit_code == 0 and mpimg.imread(one).size


def test_key_metric_and_compare(two_jobs):
    a = two_jobs[0]
    assert results.key_metric(a, a.describe()).startswith("cut ")
    heads, rows = results.compare(two_jobs)
    assert "hp n_nodes" not in {r[0] for r in results.compare(two_jobs, everything=False)[1]}
    table = {r[0]: r[1:] for r in rows}
    assert heads == ["", "plot-a", "plot-b"]
    assert table["hp stepsize"] == ["", "0.1"] and table["iterations"] == [6, 6]
    assert table["best energy"][0] == pytest.approx(min(a.result()["energies"]))
    assert "summary" in table and "cost USD" in table


def test_nothing_to_plot_is_one_line(script, cli, tmp_path):
    empty = tmp_path / "empty.py"
    empty.write_text("print('no metrics')\n")
    assert cli("run", empty, "--name", "quiet-job").exit_code == 0
    result = cli("jobs", "metrics", "quiet-job", "--plot", tmp_path / "x.png")
    assert result.exit_code == 1 and result.stderr.startswith("qhybrid: error: nothing to plot")
