"""``qhybrid devices``: what can run a job (``instances`` lives in ``cli/estimate.py``)."""
from __future__ import annotations

import typer

from qhybrid.cli import options, output


def register(app: typer.Typer) -> None:
    """Add ``devices``."""

    @app.command("devices")
    def devices(json_: options.Json = False) -> None:
        """Our engine's devices, the installed PennyLane devices, and whether CUDA is there.

        Bare names work wherever a device is asked for: --device lightning.qubit.
        """
        from qhybrid.devices import available_devices, gpu_kernel_path, resolve

        avail = available_devices()
        cuda = options.cuda_present()
        kernels, why = gpu_kernel_path(cuda=bool(cuda))
        if json_:
            output.print_json({"devices": avail, "cuda": cuda, "gpu_kernels": {"set": kernels, "why": why}})
            return
        rows = [[f"local:qhybrid/{n}", "qhybrid", "our engine" + (f" (needs CUDA; {kernels} kernels: {why})"
                                                                  if resolve(f"local:qhybrid/{n}").needs_gpu else "")]
                for n in avail["qhybrid"]]
        rows += [[f"local:pennylane/{n}", "pennylane", ""] for n in avail["pennylane"]]
        output.table(["DEVICE", "PROVIDER", "NOTE"], rows)
        output.note("CUDA: " + ("yes" if cuda else "no"))
