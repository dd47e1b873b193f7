"""A small byte-bounded cache for structure-derived tensors (phase indices, Z diagonals) and
for the spare state buffers the engine reuses between calls (``spare_buffers`` or ``take_buffers``,
then ``keep_buffers``).

The engine keeps no global state: whoever loops (a device, a layer) owns a
:class:`Cache` and passes it to ``simulate`` / ``adjoint_jacobian``.
Entries are dropped oldest first when the byte budget is exceeded.
"""
from __future__ import annotations

import math
from collections import OrderedDict

import torch

from .memory import available_bytes, itemsize


class Cache:
    """``get(key)`` / ``put(key, value, nbytes)`` with an LRU byte budget."""

    def __init__(self, *, max_bytes: int = 1 << 30):
        self.max_bytes = max_bytes
        self._items: OrderedDict = OrderedDict()
        self._bytes = 0

    def get(self, key):
        item = self._items.get(key)
        if item is None:
            return None
        self._items.move_to_end(key)
        return item[0]

    def put(self, key, value, nbytes: int) -> None:
        if nbytes > self.max_bytes:
            return
        old = self._items.pop(key, None)
        if old is not None:
            self._bytes -= old[1]
        self._items[key] = (value, nbytes)
        self._bytes += nbytes
        while self._bytes > self.max_bytes:
            _, (_, nb) = self._items.popitem(last=False)
            self._bytes -= nb

    def pop(self, key):
        """Remove and return the value under ``key`` (None when absent)."""
        item = self._items.pop(key, None)
        if item is None:
            return None
        self._bytes -= item[1]
        return item[0]

    def clear(self) -> None:
        self._items.clear()
        self._bytes = 0

    @property
    def nbytes(self) -> int:
        """Bytes of what the cache holds."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)


def spare_buffers(cache, name: str, shapes, dtype, device):
    """State-sized buffers kept in ``cache`` between calls under ``name`` (a fresh buffer is
    page-faulted in at every call, which costs about a pass over it): the kept ones, else new
    ones; None without a cache, or when they would take more than a quarter of its budget or of
    the free memory. Give them back with :func:`keep_buffers`, and only buffers the caller does
    not hand out: the next call writes into them."""
    if cache is None:
        return None
    shapes = tuple(tuple(int(d) for d in s) for s in shapes)
    nbytes = sum(math.prod(s) for s in shapes) * itemsize(dtype)
    free = available_bytes(device, needed=4 * nbytes)
    if 4 * nbytes > cache.max_bytes or (free is not None and 4 * nbytes > free):
        return None
    kept = cache.get(_buffer_key(name, shapes, dtype, device))
    return kept if kept is not None else tuple(torch.empty(s, dtype=dtype, device=device) for s in shapes)


def take_buffers(cache, name: str, shapes, dtype, device):
    """Like :func:`spare_buffers`, but the kept buffers leave ``cache`` until given back with
    :func:`keep_buffers`, so a second caller meanwhile gets new ones (buffers held from a
    forward pass to its backward pass); new ones too when nothing is kept. Never None."""
    shapes = tuple(tuple(int(d) for d in s) for s in shapes)
    kept = cache.pop(_buffer_key(name, shapes, dtype, device)) if cache is not None else None
    return kept if kept is not None else tuple(torch.empty(s, dtype=dtype, device=device) for s in shapes)


def keep_buffers(cache, name: str, buffers) -> None:
    """Keep ``buffers`` (from :func:`spare_buffers`, possibly swapped around) for the next call."""
    key = _buffer_key(name, tuple(tuple(b.shape) for b in buffers), buffers[0].dtype, buffers[0].device)
    cache.put(key, tuple(buffers), sum(b.numel() * b.element_size() for b in buffers))


def _buffer_key(name, shapes, dtype, device) -> tuple:
    return (name, shapes, dtype, str(torch.device(device)))
