"""The byte-bounded LRU cache."""
from qhybrid.sim import Cache


def test_lru_eviction_by_bytes():
    c = Cache(max_bytes=100)
    c.put("a", 1, 60)
    c.put("b", 2, 30)
    assert c.get("a") == 1  # a is now the most recent
    c.put("c", 3, 30)  # evicts b
    assert c.get("b") is None and c.get("a") == 1 and c.get("c") == 3
    c.put("huge", 4, 1000)
    assert c.get("huge") is None
    c.clear()
    assert len(c) == 0
