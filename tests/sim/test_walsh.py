"""The Walsh-Hadamard butterflies and tile copies (sim.walsh) against plain numpy."""
import numpy as np
import pytest

walsh = pytest.importorskip("qhybrid.sim.walsh")


def _wht_reference(x, h0, hmax):
    """Butterflies (a, b) -> (a + b, a - b) at strides h0, 2 h0, ... < hmax, on a 1-D array."""
    y = x.astype(np.float64).copy()
    h = h0
    while h < hmax:
        v = y.reshape(-1, 2, h)
        a, b = v[:, 0].copy(), v[:, 1].copy()
        v[:, 0], v[:, 1] = a + b, a - b
        h *= 2
    return y


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("h0,hmax", [(2, 2**12), (16, 2**12), (64, 2**10), (2**11, 2**12), (4, 32)])
def test_wht_range_matches_reference(dtype, h0, hmax):
    rng = np.random.default_rng(7)
    size = 2**12
    x = rng.standard_normal(size).astype(dtype)
    f = x.copy()
    for start in range(0, size, hmax):
        walsh.wht_range(f, start, hmax, h0, hmax)
    ref = np.concatenate([_wht_reference(x[s:s + hmax], h0, hmax) for s in range(0, size, hmax)])
    tol = 1e-12 if dtype == np.float64 else 1e-3
    np.testing.assert_allclose(f, ref, rtol=tol, atol=tol * np.abs(ref).max())


def test_wht_range_beyond_the_compiled_strides():
    """Strides past the per-stride chains (2**13 floats for radix 8) run at run time, same result."""
    rng = np.random.default_rng(11)
    size = 2**19
    x = rng.standard_normal(size)
    f = x.copy()
    walsh.wht_range(f, 0, size, 2**14, size)
    np.testing.assert_allclose(f, _wht_reference(x, 2**14, size), rtol=1e-12, atol=1e-9)


def test_wht_block_is_full_transform():
    rng = np.random.default_rng(3)
    k = 13
    psi = rng.standard_normal(2**k) + 1j * rng.standard_normal(2**k)
    f = psi.copy().view(np.float64)
    walsh.wht_block(f, 0, f.size)
    ref = _wht_reference(psi.view(np.float64), 2, f.size)
    np.testing.assert_allclose(f, ref, rtol=1e-12, atol=1e-10)


def test_tile_roundtrip():
    rng = np.random.default_rng(5)
    k, rows, w = 6, 8, 4
    psi = rng.standard_normal(rows << k) + 1j * rng.standard_normal(rows << k)
    buf = np.zeros(rows * w, dtype=np.complex128)
    for c0 in range(0, 1 << k, w):
        walsh.tile_in(psi.view(np.float64), buf.view(np.float64), rows, 1 << k, c0, w)
        np.testing.assert_array_equal(buf.reshape(rows, w), psi.reshape(rows, 1 << k)[:, c0:c0 + w])
        out = np.zeros_like(psi)
        walsh.tile_out(buf.view(np.float64), out.view(np.float64), rows, 1 << k, c0, w)
        np.testing.assert_array_equal(out.reshape(rows, 1 << k)[:, c0:c0 + w], buf.reshape(rows, w))


def _passes(h0, hmax):
    """The (radix, stride) passes of wht_range(h0, hmax): radix 8, then 4, then 2."""
    out, h = set(), h0
    for radix in (8, 4, 2):
        while radix * h <= hmax:
            out.add((radix, h))
            h *= radix
    return out


def _block_passes(size):
    if size < 16:
        return _passes(2, size)
    if size <= 2048:
        return _passes(16, size)
    return _passes(16, 2048) | _passes(2048, size)


def test_every_layout_stride_is_compiled_apart(monkeypatch):
    """The strides the QAOA sweep reaches (every n up to 34, both dtypes, 1..64 threads, default
    block_bits) are all in walsh.STRIDES (up to the 2**16-float blocks and tiles): none falls to the
    3x slower run-time loop."""
    from qhybrid.qaoa import numba_kernels as nk
    from qhybrid.qaoa.sweep import layout

    missing = set()
    for threads in (1, 2, 4, 8, 16, 32, 64):
        monkeypatch.setattr(nk, "num_threads", lambda t=threads: t)
        for dtype in ("complex128", "complex64"):
            for n in range(2, 35):
                k, w, _ = layout(n - 1, dtype)  # Max-Cut: the symmetric half; no 2**n diagonal needed
                rows = 2 ** (n - 1 - k)
                used = _block_passes(2 * 2**k) | _passes(2 * w, 2 * rows * w)
                missing |= {(r, h) for r, h in used if r * h <= 2**16 and h not in walsh.STRIDES[r]}
    assert not missing, sorted(missing)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_butterflies_entry_called_by_address_from_a_kernel(dtype):
    """The compiled entry as the kernels call it (by its address, from numba code): h0 = 0 is the
    whole block's transform, else the strides h0 <= h < hmax, on the floats from ``start`` (an
    offset into the buffer, not its start); the floats outside are untouched."""
    from numba import njit

    entry = walsh.butterflies(dtype)
    assert walsh.butterflies(dtype) == entry  # compiled once per dtype

    @njit
    def call(f, address, start, size, h0, hmax):
        walsh.call_at(address, walsh.pointer(f), start, size, h0, hmax)

    rng = np.random.default_rng(13)
    x = rng.standard_normal(2**14).astype(dtype)
    tol = 1e-12 if dtype == np.float64 else 1e-3
    for start, size, h0, hmax in [(2**12, 2**12, 0, 0), (2**13, 8, 0, 0), (2**13, 2**13, 16, 2**13),
                                  (0, 2**14, 2**11, 2**14)]:
        got = x.copy()
        call(got, entry, np.int64(start), np.int64(size), np.int64(h0), np.int64(hmax))
        want = x.astype(np.float64)
        want[start:start + size] = _wht_reference(x[start:start + size], h0 or 2, size if h0 == 0 else hmax)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
