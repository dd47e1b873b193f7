"""A small byte-bounded cache for structure-derived tensors (phase indices, Z diagonals).

The engine keeps no global state: whoever loops (a device, a layer) owns a
:class:`Cache` and passes it to ``simulate`` / ``adjoint_jacobian``.
Entries are dropped oldest first when the byte budget is exceeded.
"""
from __future__ import annotations

from collections import OrderedDict


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

    def clear(self) -> None:
        self._items.clear()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._items)
