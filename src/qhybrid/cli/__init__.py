"""The `qhybrid` command: thin commands that parse, call the library and print.

Each module named in COMMAND_MODULES exposes ``register(subparsers)`` that adds
its sub-commands; each sub-command sets ``func(args) -> int`` with
``parser.set_defaults(func=...)``. User errors (QhybridError) print one line
on stderr and exit with status 1.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from qhybrid.errors import QhybridError

COMMAND_MODULES = (
    "qhybrid.cli.jobs",  # run, jobs, instances, devices
    "qhybrid.cli.qaoa",  # qaoa
    "qhybrid.cli.qml",  # qml
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="qhybrid",
        description="Hybrid quantum-classical jobs on fast embedded simulators.",
    )
    from qhybrid import __version__

    parser.add_argument("--version", action="version", version=f"qhybrid {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as err:
            if err.name == name:  # that command is not built yet
                continue
            raise
        module.register(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 1
    try:
        return int(args.func(args) or 0)
    except QhybridError as err:
        print(f"qhybrid: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("qhybrid: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `qhybrid ... | head`: the reader left, which is not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
