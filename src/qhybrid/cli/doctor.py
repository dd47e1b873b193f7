"""``qhybrid doctor``: what this machine runs jobs with (versions, CUDA, threads, kernel cache)."""
from __future__ import annotations

import typer

from qhybrid.cli import options, output


def register(app: typer.Typer) -> None:
    """Add the ``doctor`` command."""

    @app.command("doctor")
    def doctor(json_: options.Json = False) -> None:
        """Versions of qhybrid and its engines, CUDA devices, threads and the numba kernel cache."""
        from qhybrid.devices import gpu_kernel_path
        from qhybrid.jobs.environment import collect, kernel_cache

        env = collect(cuda_probe=True)
        cache = kernel_cache()
        kernels, why = gpu_kernel_path(cuda=bool(env["gpus"]))
        if json_:
            output.print_json({**env, "kernel_cache": cache, "gpu_kernels": {"set": kernels, "why": why}})
            return
        rows = [(name, version or "not installed") for name, version in env["packages"].items()]
        rows += [("python", env["python"]), ("platform", env["platform"]), ("cpu", env["cpu"]),
                 ("cores", env["cpu_count"]), ("threads", ", ".join(f"{k}={v}" for k, v in env["threads"].items()) or "defaults"),
                 ("cuda", ", ".join(env["gpus"]) if env["gpus"] else "no CUDA device"),
                 ("gpu kernels", f"qhybrid.gpu runs {kernels} ({why})"),
                 ("kernel cache", f"{cache['path']} ({cache['files']} files, {cache['bytes'] / 2**20:.1f} MiB)"
                  if cache["files"] else f"{cache['path']} (empty: the first job compiles its kernels)"),
                 ("qhybrid source", f"{env['qhybrid_path']}" + (f" @ {env['git_commit'][:12]}" if env["git_commit"] else ""))]
        output.pairs(rows)
