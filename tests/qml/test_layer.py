"""QuantumLayer and DressedQNN against the same model on PennyLane's TorchLayer."""
from __future__ import annotations

import io
import pickle

import pytest
import torch
from kernelsets import KERNEL_SETS

from qhybrid.errors import OperationError
from qhybrid.qml import DressedQNN, QuantumLayer, margin_loss
from qhybrid.qml.reference import pennylane_layer
from qhybrid.sim.jit import HAVE_NUMBA

KERNELS = KERNEL_SETS  # every registered kernel set (tests/kernelsets.py)


def _pair(n_wires, dtype=torch.complex128, kernel="auto", seed=7):
    torch.manual_seed(seed)
    ours = DressedQNN(n_wires, dtype=dtype, qlayer=QuantumLayer(n_wires, dtype=dtype, kernel=kernel))
    real = ours.input_layer.weight.dtype
    peer = DressedQNN(n_wires, dtype=dtype, qlayer=pennylane_layer(n_wires, "default.qubit", dtype=real))
    peer.load_state_dict(ours.state_dict())
    return ours, peer


def _loss_and_grads(model, x, y):
    model.zero_grad()
    scores = model(x)
    loss = margin_loss(scores, y)
    (scores.sum() + loss).backward()
    return scores.detach(), {k: p.grad.clone() for k, p in model.named_parameters()}


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("n_wires", [2, 4, 5])
def test_dressed_qnn_matches_torchlayer_complex128(n_wires, kernel):
    ours, peer = _pair(n_wires, kernel=kernel)
    gen = torch.Generator().manual_seed(3)
    x = torch.rand((6, 60), generator=gen, dtype=torch.float64)
    y = torch.tensor([1.0, -1.0, 1.0, 1.0, -1.0, -1.0], dtype=torch.float64)
    s1, g1 = _loss_and_grads(ours, x, y)
    s2, g2 = _loss_and_grads(peer, x, y)
    torch.testing.assert_close(s1, s2, atol=1e-10, rtol=0)
    assert g1.keys() == g2.keys() and len(g1) == 7
    for key in g1:
        torch.testing.assert_close(g1[key], g2[key], atol=1e-10, rtol=0, msg=key)


@pytest.mark.parametrize("kernel", KERNELS)
def test_complex64_matches_torchlayer_complex128(kernel):
    torch.manual_seed(7)
    ours = DressedQNN(5, dtype=torch.complex64, qlayer=QuantumLayer(5, dtype=torch.complex64, kernel=kernel))
    peer = DressedQNN(5, qlayer=pennylane_layer(5, "default.qubit"))
    peer.load_state_dict({k: v.double() for k, v in ours.state_dict().items()})
    gen = torch.Generator().manual_seed(3)
    x = torch.rand((6, 60), generator=gen, dtype=torch.float64)
    y = torch.tensor([1.0, -1.0, 1.0, 1.0, -1.0, -1.0], dtype=torch.float64)
    s1, g1 = _loss_and_grads(ours, x.float(), y.float())
    s2, g2 = _loss_and_grads(peer, x, y)
    torch.testing.assert_close(s1.double(), s2, atol=1e-5, rtol=0)
    for key in g1:
        torch.testing.assert_close(g1[key].double(), g2[key], atol=1e-5, rtol=0, msg=key)


def test_input_gradients_match_torchlayer():
    n = 4
    layer = QuantumLayer(n)
    peer = pennylane_layer(n)
    peer.load_state_dict(layer.state_dict())
    x = torch.rand((5, n), dtype=torch.float64) * 6
    xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
    layer(xa).sum().backward()
    peer(xb).sum().backward()
    torch.testing.assert_close(xa.grad, xb.grad, atol=1e-10, rtol=0)


@pytest.mark.parametrize("kernel", KERNELS)
def test_complex64_is_close_to_complex128(kernel):
    torch.manual_seed(0)
    hi = QuantumLayer(5, dtype=torch.complex128, kernel=kernel)
    lo = QuantumLayer(5, dtype=torch.complex64, kernel=kernel)
    lo.load_state_dict({k: v.float() for k, v in hi.state_dict().items()})
    x = torch.rand((4, 5), dtype=torch.float64) * 6
    out_hi, out_lo = hi(x), lo(x.float())
    assert out_lo.dtype == torch.float32 and out_hi.dtype == torch.float64
    out_hi.sum().backward()
    out_lo.sum().backward()
    torch.testing.assert_close(out_lo.double(), out_hi.detach(), atol=1e-5, rtol=0)
    for a, b in zip(hi.parameters(), lo.parameters()):
        torch.testing.assert_close(b.grad.double(), a.grad, atol=1e-4, rtol=0)


def test_unbatched_and_empty_inputs():
    layer = QuantumLayer(3, ranges=(1, 2))
    x = torch.rand((2, 3), dtype=torch.float64)
    assert layer(x[0]).shape == (1,)
    torch.testing.assert_close(layer(x[0]), layer(x)[0])
    assert layer(torch.zeros((0, 3), dtype=torch.float64)).shape == (0, 1)


@pytest.mark.parametrize("kwargs, words", [
    ({"n_wires": 1}, "at least 2"),
    ({"n_wires": 3}, "multiples of 3"),
    ({"n_wires": 4, "embedding": "W"}, "X, Y, Z"),
    ({"n_wires": 4, "dtype": torch.float64}, "complex64"),
    ({"n_wires": 4, "kernel": "cuda"}, "numba"),
])
def test_bad_layer_arguments(kwargs, words):
    with pytest.raises(OperationError, match=words):
        QuantumLayer(**kwargs)


def test_bad_input_shape():
    with pytest.raises(OperationError, match=r"expected \(batch, 4\)"):
        QuantumLayer(4)(torch.zeros(2, 5))


def test_pickling_state_dict_and_whole_model(tmp_path):
    model = DressedQNN(4)
    x = torch.rand((3, 60), dtype=torch.float64)
    model(x).sum().backward()  # fills the kept buffers; they must not travel
    expected = model(x).detach()
    assert model.qlayer.buffer_bytes() > 0
    clone = pickle.loads(pickle.dumps(model))
    assert clone.qlayer.buffer_bytes() == 0
    torch.testing.assert_close(clone(x), expected)
    buf = io.BytesIO()
    torch.save(model, buf)
    buf.seek(0)
    loaded = torch.load(buf, weights_only=False)
    torch.testing.assert_close(loaded(x), expected)
    fresh = DressedQNN(4)
    fresh.load_state_dict(model.state_dict())
    torch.testing.assert_close(fresh(x), expected)


def test_pennylane_layer_pickles():
    layer = pennylane_layer(2)
    clone = pickle.loads(pickle.dumps(layer))
    x = torch.rand((2, 2), dtype=torch.float64)
    torch.testing.assert_close(clone(x), layer(x))


@pytest.mark.cuda
def test_numba_kernel_refuses_cuda():
    layer = QuantumLayer(4, kernel="numba", device="cuda")
    with pytest.raises(OperationError, match="CPU only"):
        layer(torch.zeros(2, 4, device="cuda"))


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [torch.complex128, torch.complex64])
def test_cuda_matches_cpu(dtype):
    torch.manual_seed(0)
    cpu = DressedQNN(6, dtype=dtype)
    gpu = DressedQNN(6, dtype=dtype, device="cuda")
    gpu.load_state_dict(cpu.state_dict())
    x = torch.rand((8, 60))
    a, b = cpu(x), gpu(x.cuda())
    a.sum().backward()
    b.sum().backward()
    tol = 1e-10 if dtype == torch.complex128 else 1e-4
    torch.testing.assert_close(b.cpu(), a.detach(), atol=tol, rtol=0)
    for (k, p), q in zip(cpu.named_parameters(), gpu.parameters()):
        torch.testing.assert_close(q.grad.cpu(), p.grad, atol=tol * 10, rtol=0, msg=k)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
def test_scheduled_cache_blocks_equal_the_circuit_order(monkeypatch):
    """At 16 wires the numba set's cache blocks run the gates reordered (3 blocks, 4 in circuit
    order): outputs and every gradient as the circuit's order, complex128 to 1e-12."""
    from qhybrid.sim import gateblocks

    n = 16
    gates = QuantumLayer(n).plan.gates
    assert len(gateblocks.blocks(n, gates)) < len(gateblocks.blocks(n, gates, reorder=False))
    x = torch.rand((3, n), generator=torch.Generator().manual_seed(5), dtype=torch.float64) * 6

    def run(kernel):
        torch.manual_seed(11)
        layer = QuantumLayer(n, kernel=kernel)
        xs = x.clone().requires_grad_()
        out = layer(xs)
        (out.squeeze(-1) * torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)).sum().backward()
        return [out.detach(), xs.grad] + [p.grad for p in layer.parameters()]

    scheduled = run("numba")
    monkeypatch.setattr(gateblocks, "schedule", lambda n, gates, **kw: tuple(range(len(gates))))
    for got in (run("numba"), run("torch")):  # the cut in circuit order, then gate by gate
        for a, b in zip(scheduled, got):
            torch.testing.assert_close(a, b, atol=1e-12, rtol=0)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
def test_padded_state_planes_give_the_unpadded_layer(monkeypatch):
    """The numba set's state planes padded (as at 25 wires and up, here forced at 12): outputs and
    every gradient equal the unpadded layer's exactly."""
    from qhybrid.sim import batched

    n = 12
    x = torch.rand((3, n), generator=torch.Generator().manual_seed(5), dtype=torch.float64) * 6

    def run():
        torch.manual_seed(11)
        layer = QuantumLayer(n, kernel="numba")
        xs = x.clone().requires_grad_()
        out = layer(xs)
        (out.squeeze(-1) * torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)).sum().backward()
        return [out.detach(), xs.grad] + [p.grad for p in layer.parameters()]

    plain = run()
    monkeypatch.setattr(batched, "PAD_FROM", 0)
    assert batched.plane_len(1 << n, 8) > 1 << n
    for a, b in zip(plain, run()):
        torch.testing.assert_close(b, a, atol=0, rtol=0)
