"""A job's snapshot: what ``store.create`` copies into a new job folder before it is placed."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from qhybrid.jobs import contract, index
from qhybrid.jobs.channels import COPY_IGNORE
from qhybrid.jobs.spec import JobSpec

_COPY_IGNORE = shutil.ignore_patterns(*COPY_IGNORE)


def populate(spec: JobSpec):
    """Return the function that copies ``spec``'s source, inputs, hyperparameters, checkpoints and
    ``@hybrid_job`` call into a new job folder (``store.create`` calls it on its temp folder)."""

    def fill(folder: Path) -> None:
        src, source = Path(spec.source), folder / contract.SOURCE_DIR
        if src.is_file():
            shutil.copy2(src, source / src.name)
        else:
            shutil.copytree(src, source / src.name, ignore=_COPY_IGNORE)
        for channel, path in spec.input_data.items():
            p, dest = Path(path), folder / contract.INPUT_DIR / channel
            if p.is_dir():
                shutil.copytree(p, dest)
            else:
                dest.mkdir()
                shutil.copy2(p, dest / p.name)
        contract.write_atomic(folder / contract.HP_FILE, json.dumps(spec.hyperparameters))
        if spec.copy_checkpoints_from_job:
            earlier = index.job_dir(spec.copy_checkpoints_from_job) / contract.CHECKPOINT_DIR
            shutil.copytree(earlier, folder / contract.CHECKPOINT_DIR, dirs_exist_ok=True, symlinks=True,
                            ignore=lambda d, names: [n for n in names if os.path.islink(os.path.join(d, n))])
        call = spec.extra.get("call")
        if call:
            contract.write_atomic(source / contract.CALL_FILE, json.dumps(call))

    return fill
