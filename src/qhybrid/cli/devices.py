"""``qhybrid devices`` and ``qhybrid instances``: what can run a job, and what it costs where."""
from __future__ import annotations

import typer

from qhybrid.cli import options, output


def register(app: typer.Typer) -> None:
    """Add ``devices`` and ``instances``."""

    @app.command("devices")
    def devices(json_: options.Json = False) -> None:
        """Our engine's devices, the installed PennyLane devices, and whether CUDA is there.

        Bare names work wherever a device is asked for: --device lightning.qubit.
        """
        from qhybrid.devices import available_devices

        avail = available_devices()
        cuda = options.cuda_present()
        if json_:
            output.print_json({"devices": avail, "cuda": cuda})
            return
        rows = [[f"local:qhybrid/{n}", "qhybrid", "our engine" + (" (needs CUDA)" if n.endswith("gpu") else "")]
                for n in avail["qhybrid"]]
        rows += [[f"local:pennylane/{n}", "pennylane", ""] for n in avail["pennylane"]]
        output.table(["DEVICE", "PROVIDER", "NOTE"], rows)
        output.note("CUDA: " + ("yes" if cuda else "no"))

    @app.command("instances")
    def instances(json_: options.Json = False) -> None:
        """Instance types: hardware, price per minute and the price's source."""
        from qhybrid.jobs.instances import catalogue, format_price, price_file

        cat = catalogue()
        if json_:
            output.print_json([i.__dict__ for i in cat.values()])
            return
        output.table(["TYPE", "vCPU", "MEM GiB", "GPU", "GPU MODEL", "USD/min", "PRICE SOURCE"],
                     [[i.type, i.vcpus, i.memory_gib, i.gpus, i.gpu_model, format_price(i), i.price_source]
                      for i in cat.values()],
                     right=("vCPU", "MEM GiB", "GPU", "USD/min"), no_wrap=("TYPE",))
        output.note(f"unknown prices stay unknown; add yours in {price_file()} "
                    "([prices] \"ml.c5.xlarge\" = USD per minute)")

