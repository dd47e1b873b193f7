"""The app itself: help on every command and option, one-line errors, case-insensitive choices,
bare device names, no torch at start-up."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
import typer
from typer.core import TyperGroup, TyperOption

from qhybrid.cli import COMMAND_MODULES, app, main


def _commands():
    """Every command path of the app, e.g. ("jobs", "list")."""
    root = typer.main.get_command(app)
    out = []

    def walk(cmd, path):
        if isinstance(cmd, TyperGroup):
            for name, sub in cmd.commands.items():
                walk(sub, (*path, name))
        else:
            out.append((path, cmd))

    walk(root, ())
    return out


COMMANDS = _commands()


def test_every_command_is_there():
    paths = {" ".join(p) for p, _ in COMMANDS}
    assert {"run", "qaoa", "qml", "devices", "instances", "doctor", "cluster start", "cluster status",
            "cluster stop", "jobs list", "jobs show", "jobs logs", "jobs metrics", "jobs result", "jobs wait",
            "jobs compare", "jobs cancel", "jobs rm"} <= paths
    assert COMMAND_MODULES[0] == "qhybrid.cli.run"


@pytest.mark.parametrize("path, cmd", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_help_on_every_command_and_option(path, cmd, cli):
    result = cli(*path, "--help")
    assert result.exit_code == 0 and "Usage: qhybrid" in result.stdout
    assert "<bool>" not in result.stdout, result.stdout  # flags (--json, --help) read plainly
    assert cmd.help, f"{' '.join(path)} has no help text"
    for param in cmd.params:
        if isinstance(param, TyperOption) and param.name != "help":
            assert param.help, f"{' '.join(path)} {param.opts[0]} has no help text"


GROUPS = sorted({path[:i] for path, _ in COMMANDS for i in range(len(path))})  # (), ("jobs",), ...


@pytest.mark.parametrize("path", GROUPS, ids=lambda p: " ".join(p) or "qhybrid")
def test_group_help_never_labels_a_flag_bool(path, cli):
    """Typer 0.29's Rich help shows ``<bool>`` beside flags (--help, --version, --install-completion);
    ours read plainly (every command's own help is checked in test_help_on_every_command_and_option)."""
    result = cli(*path, "--help")
    assert result.exit_code == 0 and "--help" in result.stdout
    assert "<bool>" not in result.stdout, result.stdout


def test_help_fits_80_columns(cli):
    for path in (("qaoa",), ("jobs", "list"), ()):
        text = cli(*path, "--help").stdout
        assert max(len(line) for line in text.splitlines()) <= 80


def test_version(cli):
    result = cli("--version")
    assert result.exit_code == 0 and result.stdout.startswith("qhybrid ")


@pytest.mark.parametrize("argv, words", [
    (["qaoa", "--nodes", "many"], "Invalid value for '--nodes'"),
    (["qaoa", "--problem", "tsp"], "'tsp' is not one of"),
    (["jobs", "frobnicate"], "No such command 'frobnicate'"),
    (["qaoa", "--colour"], "No such option: --colour"),
])
def test_usage_errors_are_one_line_exit_1(argv, words, cli):
    result = cli(*argv)
    assert result.exit_code == 1
    assert result.stderr.startswith("qhybrid: error: ") and words in result.stderr
    assert result.stderr.count("\n") == 1 and result.stdout == ""


def test_qhybrid_errors_are_one_line_exit_1(cli):
    result = cli("qaoa", "--device", "qhybrid.tpu")
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith("qhybrid: error: unknown pennylane simulator 'qhybrid.tpu'")
    assert result.stderr.count("\n") == 1
    result = cli("jobs", "show", "nope")
    assert result.exit_code == 1 and result.stderr.startswith("qhybrid: error: no job named 'nope'")
    assert result.stderr.count("\n") == 1


def test_main_returns_the_status(capsys):
    assert main(["jobs", "show", "nope"]) == 1
    assert capsys.readouterr().err.startswith("qhybrid: error: ")
    assert main(["devices", "--json"]) == 0
    assert main(["jobs"]) == 1  # a bare group: its help, and a failure status
    assert "compare" in "".join(capsys.readouterr())


def test_choices_are_case_insensitive_and_bare_device_names_work():
    from qhybrid.cli.options import device_string
    from qhybrid.cli.qaoa import job_kwargs

    assert device_string("lightning.qubit") == "local:pennylane/lightning.qubit"
    assert device_string("qhybrid.cpu") == "local:qhybrid/qhybrid.cpu"
    assert device_string("local:pennylane/default.qubit") == "local:pennylane/default.qubit"
    kw = job_kwargs(device="default.qubit", problem="maxclique")
    assert kw["device"] == "local:pennylane/default.qubit"


def test_case_insensitive_choice_on_the_command_line(cli):
    result = cli("jobs", "list", "--state", "completed", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout) == []


def test_start_up_imports_no_torch():
    code = ("import sys\nfrom qhybrid.cli import main\n"
            "main(['--help']); main(['devices']); main(['jobs', 'list']); main(['cluster', 'status'])\n"
            "print('TORCH', 'torch' in sys.modules, 'pennylane' in sys.modules, 'ray' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "TORCH False False False" in out.stdout


def test_console_script_module_entry(script):
    out = subprocess.run([sys.executable, "-m", "qhybrid", "run", str(script), "--hp", "x=3"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"x": "3"}
    assert "cost: " in out.stderr


def test_main_builds_only_the_command_it_runs(monkeypatch):
    from qhybrid.cli import _app_for

    def names(a):
        return set(typer.main.get_command(a).commands)

    assert names(_app_for(["qaoa", "--nodes", "5"])) == {"qaoa"}
    assert names(_app_for(["instances"])) == {"estimate", "instances"}
    full = {" ".join(p[:1]) for p, _ in COMMANDS}
    assert names(_app_for(["frobnicate"])) == full and names(_app_for([])) == full
    monkeypatch.setenv("_QHYBRID_COMPLETE", "complete_bash")
    assert names(_app_for(["qaoa"])) == full  # shell completion sees every command


@pytest.mark.parametrize("argv, words", [
    (["qaoa", "--problem", "tsp"], "qhybrid: error: Invalid value for '--problem': Value error, 'tsp' is not one of"),
    (["jobs", "frobnicate"], "qhybrid: error: No such command 'frobnicate'. (see: qhybrid jobs --help)"),
    (["frobnicate"], "qhybrid: error: No such command 'frobnicate'. (see: qhybrid --help)"),
])
def test_main_errors_read_as_with_every_command(argv, words, capsys):
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith(words) and err.count("\n") == 1
