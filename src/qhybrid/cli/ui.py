"""``qhybrid ui``: the local web dashboard over the job store (see qhybrid.ui and docs/ui.md)."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from qhybrid.cli import output


def register(app: typer.Typer) -> None:
    """Add the ``ui`` command."""

    @app.command("ui")
    def ui(port: Annotated[int, typer.Option("--port", "-p", min=0, max=65535, metavar="PORT",
                                             help="Port to serve on (0: a free one).")] = 8765,
           host: Annotated[Optional[str], typer.Option(
               "--host", metavar="ADDR",
               help="Interface to bind (default 127.0.0.1: this machine only).")] = None,
           no_browser: Annotated[bool, typer.Option("--no-browser", help="Print the URL; open no browser.")] = False,
           ) -> None:
        """Serve the jobs dashboard (jobs table, live job pages, compare) until Ctrl-C; print its URL
        with the access token every request needs."""
        from qhybrid.ui.server import LOOPBACK, serve

        if host and host not in (LOOPBACK, "localhost"):
            output.note(f"qhybrid: warning: serving on {host}, reachable from other machines on that network; "
                        "anyone with the URL's token can see your jobs and cancel them (plain HTTP, no TLS)",
                        indent="  ")
        serve(host=LOOPBACK if host in (None, "localhost") else host, port=port, open_browser=not no_browser,
              announce=lambda line: print(line, flush=True))
