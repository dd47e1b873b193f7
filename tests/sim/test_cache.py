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


def test_taken_buffers_leave_the_cache_until_kept():
    import torch

    from qhybrid.sim.cache import keep_buffers, take_buffers

    c = Cache(max_bytes=1 << 20)
    (first,) = take_buffers(c, "psi", [(8,)], torch.complex128, "cpu")
    keep_buffers(c, "psi", (first,))
    (again,) = take_buffers(c, "psi", [(8,)], torch.complex128, "cpu")
    (other,) = take_buffers(c, "psi", [(8,)], torch.complex128, "cpu")  # the kept one is out
    assert again is first and other is not first and c._bytes == 0
    assert take_buffers(None, "psi", [(4,)], torch.complex64, "cpu")[0].shape == (4,)
