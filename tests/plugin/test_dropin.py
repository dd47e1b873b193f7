"""qhybrid.cpu as a drop-in for lightning.qubit: start-up without torch, lightning's seed
semantics, program capture's ``defer_measurements``, finite-shot results equal to PennyLane's
processing of the same draw."""
import subprocess
import sys

import numpy as np
import pennylane as qml
import pytest

from qhybrid.errors import DeviceError
from qhybrid.plugin.seeding import numpy_rng
from qhybrid.plugin.shots import basis_indices, index_bits

_NO_TORCH = """
import sys
import pennylane as qml
import qhybrid.plugin
import qhybrid.plugin.device
qml.device("qhybrid.cpu", wires=3, shots=100, seed=3, c_dtype="complex64", threads=1)
dev = qml.device("qhybrid.cpu", wires=3)
assert dev.c_dtype == __import__("numpy").complex128
@qml.qnode(dev)
def f(x):
    qml.RX(x, 0)
    qml.CNOT([0, 1])
    return qml.expval(qml.Z(1))
print(qml.draw(f)(0.3))
print(sorted(m for m in ("torch", "numba") if m in sys.modules))
"""


def test_import_device_creation_and_drawing_import_neither_torch_nor_numba():
    out = subprocess.run([sys.executable, "-c", _NO_TORCH], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout


_NO_TORCH_RUN = """
import sys
import pennylane as qml
from pennylane import numpy as pnp
dev = qml.device("qhybrid.cpu", wires=4, threads=1)  # threads= loads nothing on numpy
@qml.qnode(dev, diff_method="adjoint")
def f(x):
    qml.BasisState(pnp.array([1, 0, 0, 0]), wires=range(4))
    for w in range(4):
        qml.RX(x[w], w)
    qml.CNOT([0, 1])
    qml.IsingXX(x[0], [2, 3])
    return qml.expval(qml.Z(0) @ qml.Z(3) + 0.5 * qml.X(1))
x = pnp.array([0.1, 0.2, 0.3, 0.4], requires_grad=True)
print(qml.jacobian(f)(x).tolist())
g = qml.QNode(lambda x: (qml.RY(x, 0), qml.expval(qml.Z(0)))[-1], dev, diff_method="adjoint", device_vjp=True)
print(float(qml.grad(g)(pnp.array(0.3, requires_grad=True))))
print(sorted(m for m in ("torch", "numba") if m in sys.modules))
"""


def test_executing_and_adjoint_gradients_import_neither_torch_nor_numba():
    """A QNode's value, its adjoint Jacobian and a device VJP on qhybrid.cpu (numpy path) load
    neither torch nor numba, and give default.qubit's numbers."""
    out = subprocess.run([sys.executable, "-c", _NO_TORCH_RUN], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.strip().splitlines()
    assert lines[-1] == "[]", out.stdout
    @qml.qnode(qml.device("default.qubit", wires=4), diff_method="adjoint")
    def f(x):
        qml.PauliX(0)  # the BasisState
        for w in range(4):
            qml.RX(x[w], w)
        qml.CNOT([0, 1])
        qml.IsingXX(x[0], [2, 3])
        return qml.expval(qml.Z(0) @ qml.Z(3) + 0.5 * qml.X(1))

    want = qml.jacobian(f)(qml.numpy.array([0.1, 0.2, 0.3, 0.4], requires_grad=True))
    np.testing.assert_allclose(eval(lines[-3]), want, atol=1e-10)
    np.testing.assert_allclose(float(lines[-2]), -np.sin(0.3), atol=1e-10)


def test_default_seed_draws_from_numpys_global_generator_as_lightning():
    """seed='global' (the default): one draw of np.random.randint(2**31 - 1) per device created,
    so numpy's global stream after creating devices is lightning's, and the device's generator
    is default_rng of that draw."""
    streams = {}
    for name in ("lightning.qubit", "qhybrid.cpu"):
        np.random.seed(1234)
        devs = [qml.device(name, wires=2) for _ in range(3)]
        streams[name] = np.random.random(4)
        if name == "qhybrid.cpu":
            np.random.seed(1234)
            drawn = [np.random.randint(2**31 - 1) for _ in devs]
            for dev, seed in zip(devs, drawn):
                assert dev._rng.bit_generator.state == np.random.default_rng(seed).bit_generator.state
    np.testing.assert_array_equal(streams["lightning.qubit"], streams["qhybrid.cpu"])


def test_seed_global_repeats_sampled_results():
    def run():
        np.random.seed(7)
        dev = qml.device("qhybrid.cpu", wires=3)
        f = qml.set_shots(qml.QNode(lambda: (qml.Hadamard(0), qml.Hadamard(1), qml.sample())[-1], dev), 20)
        return f(), f()

    (a1, a2), (b1, b2) = run(), run()
    np.testing.assert_array_equal(a1, b1)
    np.testing.assert_array_equal(a2, b2)
    assert not np.array_equal(a1, a2)  # one generator per device, advancing call by call


@pytest.mark.parametrize("seed", [5, np.random.default_rng(5), None])
def test_explicit_seeds(seed):
    assert isinstance(numpy_rng(seed), np.random.Generator)
    if isinstance(seed, np.random.Generator):
        assert numpy_rng(seed) is seed


@pytest.mark.parametrize("seed", ["globle", 1.5])
def test_bad_seed_names_the_value(seed):
    with pytest.raises(DeviceError, match="seed="):
        qml.device("qhybrid.cpu", wires=2, seed=seed)


def _capture_program(x):
    qml.RX(x, 0)
    m = qml.measure(0)
    qml.cond(m, qml.RY)(0.4, 1)
    return qml.expval(qml.Z(1)), qml.expval(qml.Z(0))


def test_capture_defers_measurements_with_num_wires_and_runs_concrete_programs():
    jax = pytest.importorskip("jax")
    dev = qml.device("qhybrid.cpu", wires=3)
    ref = qml.QNode(_capture_program, qml.device("lightning.qubit", wires=3))(0.7)
    qml.capture.enable()
    try:
        prog = dev.preprocess_transforms(qml.devices.ExecutionConfig())
        defer = [t for t in prog if "defer_measurements" in repr(t)]
        assert defer and defer[0].kwargs.get("num_wires") == 3
        got = qml.QNode(_capture_program, dev)(0.7)
        with pytest.raises(DeviceError, match="concrete arguments"):
            jax.jit(qml.QNode(_capture_program, dev))(0.7)
    finally:
        qml.capture.disable()
    np.testing.assert_allclose(got, ref, atol=1e-10)


_OBSERVABLES = [qml.Z(0), qml.X(1) @ qml.Y(2), 0.5 * qml.Z(0) @ qml.Z(2) - 1.5 * qml.Z(1) + 0.25 * qml.Identity(0),
                qml.X(0) @ qml.Y(2) + 0.3 * qml.Y(2), qml.Hermitian(np.array([[1.0, 0.5], [0.5, -2.0]]), 1),
                qml.Hadamard(2)]


@pytest.mark.parametrize("obs", _OBSERVABLES, ids=lambda o: type(o).__name__)
@pytest.mark.parametrize("shots", [1000, (10, 300)])
def test_shot_results_match_pennylane_processing_of_the_same_draw(obs, shots):
    """The device's finite-shot results equal PennyLane's process_samples on the same drawn bits
    (the same generator state), for expval, var, sample, counts, probs, over shot vectors."""
    dev = qml.device("qhybrid.cpu", wires=[0, 1, 2], seed=11)
    ops = [qml.RX(0.4, 0), qml.RY(1.1, 1), qml.CNOT([1, 2]), qml.RX(0.3, 2)]
    mps = [qml.expval(obs), qml.var(obs), qml.sample(wires=[2, 0]), qml.counts(wires=[1]), qml.probs(wires=[0, 1])]
    tape = qml.tape.QuantumScript(ops + obs.diagonalizing_gates(), mps, shots=shots)
    tape_dev = qml.tape.QuantumScript(ops, mps, shots=shots)
    ours = dev.execute(dev.preprocess_transforms()((tape_dev,))[0])
    # PennyLane's processing of the same draw: rotate, draw with the same generator state
    state = qml.devices.qubit.simulate(qml.tape.QuantumScript(tape.operations, [qml.state()]))
    rng = np.random.default_rng(11)
    import torch

    st = torch.from_numpy(np.asarray(state).reshape(1, -1))
    base = qml.devices.qubit.simulate(qml.tape.QuantumScript(ops, [qml.state()]))
    bits_rot = index_bits(basis_indices(st, tape.shots.total_shots, rng)[0], 3)
    bits_plain = bits_rot if not obs.diagonalizing_gates() else index_bits(
        basis_indices(torch.from_numpy(np.asarray(base).reshape(1, -1)), tape.shots.total_shots, rng)[0], 3)
    ours = ours[0]
    bins = list(tape.shots.bins())
    for k, (lo, hi) in enumerate(bins):
        got = ours[k] if tape.shots.has_partitioned_shots else ours
        for mp, g in zip(mps, got):
            bits = bits_rot if mp.obs is not None else bits_plain
            want = mp.process_samples(bits[lo:hi], [0, 1, 2])
            if isinstance(want, dict):
                assert g == want
            else:
                np.testing.assert_allclose(g, want, atol=1e-12)


def test_capabilities_are_pennylanes_reading_of_our_file_read_once():
    """The TOML file is read once (tomllib) for both devices, to what PennyLane reads from it."""
    from pennylane.devices.capabilities import DeviceCapabilities

    from qhybrid.plugin.device import QhybridCPU, QhybridGPU

    assert QhybridCPU.capabilities == DeviceCapabilities.from_toml_file(str(QhybridCPU.config_filepath))
    assert QhybridGPU.capabilities is QhybridCPU.capabilities
    assert QhybridGPU.config_filepath == QhybridCPU.config_filepath


def test_orderless_tapes_use_the_unordered_draw():
    """A tape of expectation values, counts and probabilities (one bin) reads the unordered draw
    (counts laid out in index order, no shuffle): the same numbers as PennyLane's processing of
    ``basis_indices(..., ordered=False)`` from the same generator state."""
    ops = [qml.RX(0.4, 0), qml.RY(1.1, 1), qml.CNOT([1, 2])]
    mps = [qml.expval(qml.Z(0) @ qml.Z(2)), qml.counts(wires=[1, 2]), qml.probs(wires=[0])]
    dev = qml.device("qhybrid.cpu", wires=3, seed=5)
    got = dev.execute(qml.tape.QuantumScript(ops, mps, shots=5000))
    state = np.asarray(qml.devices.qubit.simulate(qml.tape.QuantumScript(ops, [qml.state()]))).reshape(1, -1)
    drawn = basis_indices(state, 5000, np.random.default_rng(5), ordered=False)[0]
    assert np.all(np.diff(drawn) >= 0)  # (in index order: 8 basis states <= 5000 shots)
    for mp, g in zip(mps, got):
        want = mp.process_samples(index_bits(drawn, 3), [0, 1, 2])
        assert g == want if isinstance(want, dict) else np.allclose(g, want, atol=1e-12)


@pytest.mark.parametrize("n, shots", [(2, 40000), (3, 20), (6, 40000), (10, 40000)])
@pytest.mark.parametrize("ordered", [True, False])
def test_basis_indices_follow_the_probabilities(n, shots, ordered):
    """Both ways of drawing (counts then shuffle; inverse CDF) give the state's distribution,
    and the ordered draw's halves are alike (no index order left by the counts path)."""
    rng = np.random.default_rng(n)
    amp = rng.normal(size=2**n) + 1j * rng.normal(size=2**n)
    amp /= np.linalg.norm(amp)
    p = np.abs(amp) ** 2
    drawn = basis_indices(amp[None], shots, np.random.default_rng(1), ordered=ordered)[0]
    assert drawn.shape == (shots,) and drawn.min() >= 0 and drawn.max() < 2**n
    freq = np.bincount(drawn, minlength=2**n) / shots
    assert np.all(np.abs(freq - p) <= 6 * np.sqrt(p * (1 - p) / shots) + 1e-12)
    if ordered and shots > 1000:
        first, second = drawn[: shots // 2].mean(), drawn[shots // 2:].mean()
        assert abs(first - second) < 6 * drawn.std() / np.sqrt(shots / 4)


@pytest.mark.parametrize("n", [1, 4, 14, 15])
def test_index_bits_are_each_indexs_bits_wire_0_first(n):
    idx = np.random.default_rng(n).integers(0, 2**n, size=(2, 50))
    bits = index_bits(idx, n)
    assert bits.shape == (2, 50, n) and bits.dtype == np.int64
    np.testing.assert_array_equal(bits @ (2 ** np.arange(n - 1, -1, -1)), idx)
