"""The device's random numbers: lightning.qubit's ``seed`` semantics.

``seed="global"`` (the default, as on lightning.qubit) draws one integer from numpy's global
generator, ``np.random.randint(2**31 - 1)``, when the device is created, and seeds the device's
own generator with it: a program that calls ``np.random.seed(s)`` and then creates devices draws
the same seeds, and leaves numpy's global generator in the same state, as on lightning.qubit.
``seed=None`` takes fresh entropy from the OS; an int, a sequence of ints, a ``SeedSequence``,
a ``BitGenerator`` or a ``numpy.random.Generator`` are passed to ``numpy.random.default_rng``
(a generator is used as it is); a ``torch.Generator`` gives one draw from it as the seed.
"""
from __future__ import annotations

import numpy as np

from ..errors import DeviceError


def numpy_rng(seed) -> np.random.Generator:
    """The device's generator for ``seed`` (see the module docstring).

    Args:
        seed: ``"global"``, None, an int (or ints), a SeedSequence, BitGenerator, numpy
            Generator, or a torch Generator.

    Returns:
        A ``numpy.random.Generator``.

    Raises:
        DeviceError: ``seed`` is another string, or something numpy cannot seed from.
    """
    if isinstance(seed, str):
        if seed != "global":
            raise DeviceError(f"seed={seed!r} is not valid; use 'global' (the default: a seed drawn from "
                              f"numpy's global generator), None, an int or a numpy Generator")
        seed = np.random.randint(2**31 - 1)
    elif type(seed).__module__.startswith("torch") and type(seed).__name__ == "Generator":
        import torch

        seed = int(torch.randint(0, 2**62, (1,), generator=seed))
    try:
        return np.random.default_rng(seed)
    except (TypeError, ValueError) as exc:
        raise DeviceError(f"seed={seed!r} is not valid ({exc}); use 'global', None, an int or a "
                          f"numpy Generator") from None
