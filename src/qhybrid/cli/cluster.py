"""``qhybrid cluster start|status|stop``: the local Ray cluster that ``--backend ray`` uses."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from qhybrid.cli import options, output


def _ray_cluster():
    """The Ray cluster module (``backends/ray/cluster``), imported only when a cluster command runs.

    It needs only the standard library to import (Ray itself loads when a cluster is reached), and
    raises ``ClusterError`` with the install hint when the ``ray`` command is missing.
    """
    from qhybrid.jobs.backends.ray import cluster

    return cluster


def _doc(cluster) -> dict:
    return {"address": cluster.address, "pid": cluster.pid, "num_cpus": cluster.num_cpus,
            "client": f"ray://127.0.0.1:{cluster.client_port}" if cluster.client_port else None, "log": cluster.log}


def register(app: typer.Typer) -> None:
    """Add the ``cluster`` group."""
    group = typer.Typer(name="cluster", no_args_is_help=True, help="The local Ray cluster (--backend ray).")
    app.add_typer(group)

    @group.command("start")
    def start(num_cpus: Annotated[Optional[int], typer.Option(help="CPUs the cluster offers (default: all).")] = None,
              json_: options.Json = False) -> None:
        """Start the local Ray cluster (or report the one running)."""
        rc = _ray_cluster()
        with rc._locked():
            cluster = rc.read_record()
            if cluster is None or not cluster.alive():
                output.note("starting a local Ray cluster ...")
                cluster = rc.start_local_cluster(num_cpus=num_cpus)
        if json_:
            output.print_json({"running": True, **_doc(cluster)})
        else:
            print(rc._describe(cluster))

    @group.command("status")
    def status(json_: options.Json = False) -> None:
        """Say whether the local Ray cluster runs (exit 1 when it does not)."""
        rc = _ray_cluster()
        cluster = rc.read_record()
        up = cluster is not None and cluster.alive()
        if json_:
            output.print_json({"running": up, **(_doc(cluster) if up else {})})
        else:
            print(rc._describe(cluster) if up else "no local Ray cluster running")
        if not up:
            raise typer.Exit(1)

    @group.command("stop")
    def stop(json_: options.Json = False) -> None:
        """Stop the local Ray cluster and everything it runs."""
        stopped = _ray_cluster().stop_local_cluster()
        if json_:
            output.print_json({"stopped": stopped})
        else:
            print("stopped the local Ray cluster" if stopped else "no local Ray cluster was running")
