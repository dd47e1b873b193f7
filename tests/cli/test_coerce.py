"""Option values converted without pydantic: every plain option of every command, Typer's messages."""
from __future__ import annotations

import subprocess
import sys

import pytest
import typer
from typer.core import TyperGroup

from qhybrid.cli import app, coerce


def _params():
    root = typer.main.get_command(app)
    out = []

    def walk(cmd):
        out.extend(cmd.params)
        for sub in getattr(cmd, "commands", {}).values():
            walk(sub)

    walk(root)
    return out


def test_every_plain_option_gets_a_plain_coercion():
    plain = [p for p in _params() if coerce.plain_runtime_param(p) is not None]
    assert len(plain) > 40  # int, float, str, bool, Literal and list options of all commands
    names = {p.name for p in plain}
    assert {"nodes", "tolerance", "problem", "device", "state", "json_"} <= names


@pytest.mark.parametrize("convert, text, value", [
    (coerce.to_int, " 12 ", 12), (coerce.to_int, 3.0, 3), (coerce.to_float, "1e-3", 1e-3),
    (coerce.to_float, 2, 2.0), (coerce.to_str, b"abc", "abc"), (coerce.to_bool, "Yes", True),
    (coerce.to_bool, "", False), (coerce.to_bool, 0, False),
])
def test_converters(convert, text, value):
    out = convert(text)
    assert out == value and type(out) is type(value)


@pytest.mark.parametrize("convert, text, message", [
    (coerce.to_int, "many", coerce.NOT_INT), (coerce.to_int, 1.5, coerce.FRACTION),
    (coerce.to_float, "x", coerce.NOT_NUMBER), (coerce.to_bool, "maybe", coerce.NOT_BOOL),
])
def test_converter_errors_are_typers_words(convert, text, message):
    with pytest.raises(ValueError, match=message):
        convert(text)


@pytest.mark.parametrize("argv, words", [
    (["qaoa", "--layers", "two"], "Invalid value for '--layers' / '-p': " + coerce.NOT_INT),
    (["qaoa", "--stepsize", "big"], "Invalid value for '--stepsize': " + coerce.NOT_NUMBER),
    (["qaoa", "--optimizer", "lbfgs"], "Invalid value for '--optimizer': Value error, 'lbfgs' is not one of "
                                       "'adam', 'sgd'."),
])
def test_bad_values_are_one_line_usage_errors(argv, words, cli):
    result = cli(*argv)
    assert result.exit_code == 1 and result.stderr.startswith("qhybrid: error: ")
    assert words in result.stderr and result.stderr.count("\n") == 1


@pytest.mark.parametrize("argv, words", [
    (["run", "job.py", "--instance-count", "two"], "Invalid value for '--instance-count': " + coerce.NOT_INT
     + ", got 'two'"),
    (["run", "job.py", "--max-runtime", "1h"], "Invalid value for '--max-runtime': " + coerce.NOT_NUMBER
     + ", got '1h'"),
    (["qaoa", "--layers", "2.5x"], ", got '2.5x'"),
])
def test_bad_numbers_are_repeated_in_the_message(argv, words, cli):
    result = cli(*argv)
    assert result.exit_code == 1 and words in result.stderr and result.stderr.count("\n") == 1


def test_choices_keep_case_insensitivity_and_lists_convert(cli):
    result = cli("jobs", "list", "--state", "COMPLETED", "--limit", "2", "--json")
    assert result.exit_code == 0 and result.stdout.strip() == "[]"


def test_commands_do_not_import_pydantic():
    code = ("import sys\nfrom qhybrid.cli import main\n"
            "main(['--help']); main(['devices']); main(['jobs', 'list', '--state', 'completed', '-n', '3'])\n"
            "main(['qaoa', '--nodes', 'x'])\n"
            "print('PYDANTIC', 'pydantic' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "PYDANTIC False" in out.stdout


def test_a_group_is_left_to_typer_when_nothing_is_plain():
    group = TyperGroup(name="empty")
    coerce.install_param(group)  # no type descriptor: untouched, no error
    assert not hasattr(group, "_runtime_param")
