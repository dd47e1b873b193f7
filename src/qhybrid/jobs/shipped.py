"""Inside a ``@hybrid_job`` job: run the call that was shipped by value and save what it returns.

The entry point that ``qhybrid.submit.decorator`` writes into the job's source calls
:func:`run_shipped`; the caller's side (pickling the call, writing the source) lives there,
above the runtime.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from qhybrid.jobs import script

SHIPPED = "function.pkl"
CALL = "call.json"


def _link(links: list) -> list[Path]:
    made = []
    for rel, channel, kind in links:
        link = Path(rel)
        channel_dir = script.input_dir(channel)
        target = channel_dir if kind == "dir" else channel_dir / link.name
        if link.exists() or link.is_symlink():
            continue
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target, target_is_directory=kind == "dir")
        made.append(link)
    return made


def _unlink(made: list[Path]) -> None:
    for link in made:
        if link.is_symlink():
            link.unlink()
        for parent in list(link.parents)[:-1]:  # folders made for the link, when left empty
            try:
                parent.rmdir()
            except OSError:
                break


def run_shipped(entry_file: str) -> None:
    """Run the shipped call in the results folder and save its return value (in the job)."""
    import cloudpickle

    package = Path(entry_file).resolve().parent
    meta = json.loads((package / CALL).read_text(encoding="utf-8"))
    call = cloudpickle.loads((package / SHIPPED).read_bytes())  # the caller's own call, written by ship()
    os.chdir(script.results_dir())
    made = _link(meta.get("links", []))
    try:
        value = call()
    finally:
        _unlink(made)
    if value is None or (isinstance(value, dict) and not value):
        return
    script.save_return_value(value, data_format=meta.get("data_format", "plaintext"), wrap=False,
                             hint="@hybrid_job(..., data_format='pickle') (pickle_result=True)")
