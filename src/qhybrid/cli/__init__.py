"""The ``qhybrid`` command, on Typer (Click) + Rich: thin commands that parse, call the library, print.

Every module named in ``COMMAND_MODULES`` defines ``register(app: typer.Typer) -> None`` that adds
its commands (or a sub-``Typer`` group) to ``app``; a module not yet present is skipped. Shared
options are ``Annotated`` aliases in ``qhybrid.cli.options``: adding an option to a command is one
parameter line. Contract: a ``QhybridError`` prints one line ``qhybrid: error: ...`` on stderr and
exits 1; so does a usage error; ``--json`` prints exactly one JSON document on stdout.

Nothing heavy is imported here or at command-module import time (torch, PennyLane, Ray load
inside the commands that need them), so ``--help`` and ``devices`` start in well under a second.
"""
from __future__ import annotations

import importlib
import sys

import typer
from typer.core import TyperGroup

from qhybrid.cli import coerce

COMMAND_MODULES = (
    "qhybrid.cli.run",  # run
    "qhybrid.cli.jobs",  # jobs list|show|logs|metrics|result|wait|compare|cancel|rm
    "qhybrid.cli.qaoa",  # qaoa
    "qhybrid.cli.qml",  # qml
    "qhybrid.cli.devices",  # devices
    "qhybrid.cli.cluster",  # cluster start|status|stop
    "qhybrid.cli.doctor",  # doctor
    "qhybrid.cli.estimate",  # estimate qaoa|qml|run, instances
    "qhybrid.cli.ui",  # ui
)

#: The module of each top-level command: ``main`` builds only the one it runs (building every
#: command's options with Typer costs a tenth of a second or more); the full app otherwise.
COMMAND_OF = {"run": "qhybrid.cli.run", "jobs": "qhybrid.cli.jobs", "qaoa": "qhybrid.cli.qaoa",
              "qml": "qhybrid.cli.qml", "devices": "qhybrid.cli.devices", "cluster": "qhybrid.cli.cluster",
              "doctor": "qhybrid.cli.doctor", "estimate": "qhybrid.cli.estimate",
              "instances": "qhybrid.cli.estimate", "ui": "qhybrid.cli.ui"}

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _version(value: bool) -> None:
    if value:
        from qhybrid import __version__

        print(f"qhybrid {__version__}")
        raise typer.Exit(0)


def _usage_line(err) -> str:
    ctx = getattr(err, "ctx", None)
    where = f" (see: {ctx.command_path} --help)" if ctx is not None else ""
    return f"qhybrid: error: {err.format_message()}{where}"


def _exceptions():
    """Click's exception module: Typer 0.2x vendors its own Click (``typer._click``), older ones use Click."""
    try:
        from typer._click import exceptions
    except ImportError:  # pragma: no cover - a Typer on the real Click
        from click import exceptions
    return exceptions


def _untyped_flags(command) -> None:
    """Leave the type column of a flag's help row empty, in ``command`` and every command under it;
    and give every parameter there a value coercion without pydantic (``coerce``).

    Typer 0.29's Rich help labels every flag (``--json``, ``--help``, ``--version``) ``<bool>``, as
    if it took a value; a flag's metavar is used nowhere else (usage lines and errors name its
    option strings), so an empty one makes the row read ``--json   Print one JSON document ...``.
    Done when the command gathers its parameters (``get_help_option``, called for parsing and for
    help alike), so that the help option, made on first use, and the completion options, added
    after the group is built, are covered too.
    """
    make_help = command.get_help_option

    def help_option(ctx):
        option = make_help(ctx)
        for param in (*command.params, *([option] if option is not None else [])):
            if getattr(param, "is_flag", False) and param.metavar is None:
                param.metavar = ""
            coerce.install_param(param)
        return option

    command.get_help_option = help_option
    for sub in getattr(command, "commands", {}).values():
        _untyped_flags(sub)


def _help_names_whole() -> None:
    """Keep option names whole in Rich help at any width: Typer's options table lets Rich shrink
    every column alike (``--processes-per-…`` at 80 columns); here its name columns never wrap, and
    the type and help columns take the narrowing."""
    import typer.rich_utils as rich_utils
    from rich.table import Table

    if getattr(rich_utils.Table, "_qhybrid", False):
        return

    class HelpTable(Table):
        _qhybrid = True

        def add_row(self, *cells, **kwargs):
            super().add_row(*cells, **kwargs)
            if len(self.rows) == 1 and len(self.columns) > 2:
                for column in self.columns[:-2]:  # the required mark and the option names
                    column.no_wrap = True

    rich_utils.Table = HelpTable


class _Root(TyperGroup):
    """The root group: every command's QhybridError and usage error become one line and exit 1,
    under ``main`` and under Typer's test runner alike; flags without a ``<bool>`` in help; plain
    option values converted without pydantic (``coerce``)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _untyped_flags(self)
        _help_names_whole()


    def invoke(self, ctx):
        from qhybrid.errors import QhybridError

        exc = _exceptions()
        try:
            return super().invoke(ctx)
        except QhybridError as err:
            print(f"qhybrid: error: {err}", file=sys.stderr, flush=True)
            raise typer.Exit(1)
        except exc.NoArgsIsHelpError as err:  # a bare group: its help, on stderr
            print(err.ctx.get_help(), file=sys.stderr, flush=True)
            raise typer.Exit(1)
        except exc.UsageError as err:
            print(_usage_line(err), file=sys.stderr, flush=True)
            raise typer.Exit(1)


def _make_app(modules=COMMAND_MODULES) -> typer.Typer:
    app = typer.Typer(
        name="qhybrid", cls=_Root, no_args_is_help=True, add_completion=True, pretty_exceptions_enable=False,
        context_settings=CONTEXT, rich_markup_mode="markdown",
        help="Hybrid quantum-classical jobs on fast embedded simulators, with Braket's job contract.",
    )

    @app.callback()
    def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                           help="Print qhybrid's version and exit.")) -> None:
        """Hybrid quantum-classical jobs on fast embedded simulators, with Braket's job contract."""

    for name in modules:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as err:
            if err.name == name:  # that command is not built yet
                continue
            raise
        module.register(app)
    return app


_APP = None


def __getattr__(name):  # ``app``: the whole command tree, built on first use (tests, help, completion)
    global _APP
    if name == "app":
        if _APP is None:
            _APP = _make_app()
        return _APP
    raise AttributeError(f"module 'qhybrid.cli' has no attribute {name!r}")


def _app_for(args: list[str]) -> typer.Typer:
    """The app ``main`` runs ``args`` with: only the named command's module when the first argument
    is a known command (its help, options and errors are the same), else every command."""
    import os

    module = COMMAND_OF.get(args[0]) if args else None
    if module is None or any(k.startswith("_QHYBRID_COMPLETE") for k in os.environ):
        return __getattr__("app")
    return _make_app((module,))


def main(argv=None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); return the exit status.

    Errors are one line on stderr: a ``QhybridError`` or a usage error exits 1, Ctrl-C 130.
    """
    from qhybrid.errors import QhybridError

    exc = _exceptions()
    args = list(sys.argv[1:] if argv is None else argv)
    if argv is None:  # the qhybrid process itself, not a caller's Python: fork the jobs' supervisors
        from qhybrid.cli import workload

        workload.LAUNCH = "fork"
    try:
        value = _app_for(args)(args=args, prog_name="qhybrid", standalone_mode=False)
        return int(value or 0) if isinstance(value, int) else 0
    except QhybridError as err:
        print(f"qhybrid: error: {err}", file=sys.stderr)
        return 1
    except exc.NoArgsIsHelpError as err:  # a bare `qhybrid`: its help, on stderr
        print(err.ctx.get_help(), file=sys.stderr)
        return 1
    except exc.UsageError as err:
        print(_usage_line(err), file=sys.stderr)
        return 1
    except typer.Exit as err:
        return err.exit_code
    except (typer.Abort, KeyboardInterrupt):
        print("qhybrid: interrupted", file=sys.stderr)
        return 130
    except exc.ClickException as err:
        print(f"qhybrid: error: {err.format_message()}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # `qhybrid ... | head`: the reader left, which is not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
