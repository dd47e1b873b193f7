"""The CLI at 80 and 120 columns and its one-line errors: help, progress, failures, bad input."""
from __future__ import annotations

import pytest

from qhybrid.cli.workload import Display, ProgressSpec


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("command", ["qml", "qaoa", "run"])
def test_help_keeps_every_option_name_whole(cli, monkeypatch, columns, command):
    monkeypatch.setenv("COLUMNS", str(columns))
    res = cli(command, "--help")
    assert res.exit_code == 0 and "…" not in res.output
    assert max(len(line) for line in res.output.splitlines()) <= columns
    for name in ("--device", "--instance", "--max-cost", "--name"):
        assert name in res.output
    if command != "qaoa":
        assert "--processes-per-instance" in res.output


def test_the_same_defaults_and_budget_options_on_run_qaoa_and_qml(script):
    from qhybrid.cli import qaoa, qml, run

    kwargs = [run.job_kwargs(source=str(script), max_cost=0.5), qaoa.job_kwargs(max_cost=0.5),
              qml.job_kwargs(max_cost=0.5)]
    assert {k["instance_config"].instanceType for k in kwargs} == {"ml.m5.2xlarge"}
    assert {k["max_cost"] for k in kwargs} == {0.5}


@pytest.mark.parametrize("argv", [("qaoa", "--iterations", "0"), ("qml", "--epochs", "0")])
def test_zero_iterations_are_refused_in_one_line(cli, argv, _isolated_home):
    res = cli(*argv)
    assert res.exit_code == 1 and len(res.output.strip().splitlines()) == 1
    assert res.output.startswith(f"qhybrid: error: {argv[1]} 0: give 1 or more")
    assert not (_isolated_home / "jobs").exists() or not any((_isolated_home / "jobs").iterdir())


@pytest.mark.parametrize("body, problem", [("a,b,c\n1,2\n", "line 1: 3 columns"),
                                           ("0.1," * 60 + "X\n", "line 1: label 'X'"),
                                           ("0.1," * 60 + "M\n", "1 data rows")])
def test_a_bad_input_file_is_one_line_naming_it_as_given_before_submitting(cli, tmp_path, monkeypatch, body,
                                                                          problem, _isolated_home):
    (tmp_path / "bad.csv").write_text(body)
    monkeypatch.chdir(tmp_path)
    res = cli("qml", "--input", "bad.csv")
    assert res.exit_code == 1 and res.output.count("\n") == 1, res.output
    assert res.output.startswith("qhybrid: error: --input 'bad.csv'") and problem in res.output
    assert not (_isolated_home / "jobs").exists() or not any((_isolated_home / "jobs").iterdir())
    res = cli("qml", "--input", "missing.csv")
    assert res.exit_code == 1 and "--input 'missing.csv': no such file" in res.output


def test_a_failing_script_shows_its_own_traceback_once(cli, tmp_path):
    script = tmp_path / "broken.py"
    script.write_text("def helper():\n    raise ValueError('bad value 42')\n\nhelper()\n")
    res = cli("run", script, "--name", "broken-1")
    assert res.exit_code == 1
    err = res.stderr
    assert err.count("Traceback (most recent call last)") == 1, err
    assert "entry.py" not in err and "runpy" not in err
    assert f'File "{script}", line 2, in helper' in err  # the user's file, not the job's copy
    assert err.strip().splitlines()[-1].startswith("qhybrid: error: job broken-1 FAILED")
    quiet = cli("run", script, "--name", "broken-2", "--quiet")
    assert quiet.stderr.count("Traceback (most recent call last)") == 1 and "entry.py" not in quiet.stderr


def test_the_last_metrics_come_before_the_jobs_end(capsys):
    d = Display("job", ProgressSpec(first=0), live=False)
    for it in (0, 1):
        d.line(f"Metrics - timestamp=1; loss={3 - it}; iteration_number={it};")
    d.line("qhybrid: job job COMPLETED after 1.00 s")
    d.close()
    assert capsys.readouterr().err.splitlines() == ["iteration 1  loss 3", "iteration 2  loss 2",
                                                    "qhybrid: job job COMPLETED after 1.00 s"]


def test_waits_before_the_first_iteration_are_named(capsys, monkeypatch):
    import qhybrid.cli.workload as workload

    monkeypatch.setattr(workload, "COMPILE_AFTER_S", 0.0)
    files = iter([3, 5, 5, 5])
    monkeypatch.setattr(Display, "_kernel_files", lambda self: next(files))
    monkeypatch.setattr(workload, "KERNEL_LOOK_S", 0.0)
    d = Display("job", ProgressSpec(show={"energy": "energy {:.1f}"}), live=False)
    d.line("qhybrid: building environment /x for: tqdm")
    d.poll("RUNNING")
    d.poll("RUNNING")
    d.line("qhybrid: using environment /x")
    d.poll("RUNNING")  # kernel files 3 -> 5: compiling
    d.line("Metrics - timestamp=1; energy=-3; iteration_number=0;")
    err = capsys.readouterr().err.splitlines()
    assert err[1] == "building the job's dependency environment (pip; once per requirements) ..."
    assert err[3].startswith("compiling kernels for this circuit") and "2 so far" in err[3]
    assert err[4].startswith("first iteration after ")


def test_seed_timing_says_it_is_a_timing_where_its_cut_is_shown(capsys):
    from qhybrid.cli.qaoa import job_kwargs, show_result

    hp = job_kwargs(preset="seed-timing")["hyperparameters"]
    result = {"summary": "cut 3 of 24 edges — optimum 21 (not found)", "best_bitstring": "01", "best_probability": 0.0,
              "energy": -11.9, "optimum": -21, "approximation_ratio": 0.56, "best_approximation_ratio": 0.14,
              "iterations": 5, "layers": [2] * 5, "converged": [False], "iteration_seconds": [0.1] * 5}
    show_result(result, hp=hp)
    out = capsys.readouterr().out
    assert out.index("cut 3 of 24") < out.index("reproduces the seed's timing study") < out.index("best bitstring")
    assert "not an answer" in out
    show_result(result, hp=job_kwargs(starts=4)["hyperparameters"])
    text = " ".join(capsys.readouterr().out.split())  # a long value wraps at words, under itself
    assert "timing study" not in text and "each a step of all 4 starts" in text


def test_instances_date_every_known_price_and_fit(cli, monkeypatch):
    for columns in (80, 120):
        monkeypatch.setenv("COLUMNS", str(columns))
        res = cli("instances")
        lines = res.stdout.splitlines()
        assert max(len(line) for line in lines) <= columns and "…" not in res.stdout
        row = next(line for line in lines if line.startswith("ml.m5.2xlarge "))
        assert "0.00768" in row and "2026-11-30" in row
        ref = row.split()[-1]
        source = next(line for line in lines if line.startswith(ref))
        assert "braket: Braket Hybrid Jobs rate" in source and "seed document" in source


@pytest.mark.parametrize("columns", [70, 80, 120])
def test_the_bar_keeps_its_times_whole_and_cuts_the_metrics_first(monkeypatch, columns):
    import io
    import re

    from rich.console import Console

    import qhybrid.cli.output as output

    console = Console(file=io.StringIO(), width=columns, force_terminal=True, color_system=None)
    monkeypatch.setattr(output, "err", lambda: console)
    show = {"Loss": "loss {:.4f}", "train_accuracy": "train {:.3f}", "val_accuracy": "val {:.3f}",
            "epoch_seconds": "{:.2f} s"}
    d = Display("job", ProgressSpec(total=10, show=show, unit="epoch", first=1), live=True)
    d.bar.stop()
    d.line("Metrics - timestamp=1; Loss=0.6931; train_accuracy=0.5123; val_accuracy=0.5; epoch_seconds=1.5; "
           "iteration_number=1;")
    with console.capture() as captured:
        console.print(d.bar.get_renderable())
    line = captured.get().rstrip("\n")
    assert "\n" not in line and len(line) <= columns
    assert re.search(r"running +\S+ +1/10 \d:\d\d:\d\d ETA (\d:\d\d:\d\d|-:--:--) loss 0\.6931", line), line
    assert line.endswith("1.50 s") or line.endswith("…")


def test_an_output_file_in_a_missing_folder_is_one_line(tmp_path):
    from qhybrid.cli.output import writable_path
    from qhybrid.errors import SpecError

    assert writable_path(str(tmp_path / "m.png"), option="--plot") == str(tmp_path / "m.png")
    with pytest.raises(SpecError, match=r"^--plot '/missing/dir/m.png': the folder '/missing/dir' does not exist"):
        writable_path("/missing/dir/m.png", option="--plot")
    with pytest.raises(SpecError, match="is a folder"):
        writable_path(str(tmp_path), option="--plot")


def test_the_workload_refuses_zero_iterations_too():
    import qhybrid.workloads.qaoa as workload
    from qhybrid.errors import SpecError

    with pytest.raises(SpecError, match="iterations"):
        workload.parse_settings({"iterations": "0"})
