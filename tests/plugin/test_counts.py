"""``plugin/counts.py``: counts from drawn indices, the same dict (keys, their types and order,
counts) as PennyLane's ``process_samples`` on the same draw, and through a QNode the same format
as default.qubit with frequencies within shot noise."""
from __future__ import annotations

import numpy as np
import pennylane as qml
import pytest

from qhybrid.plugin.counts import counted_from_indices, counts_dict
from qhybrid.plugin.shots import index_bits

MEASUREMENTS = {
    "all wires": lambda: qml.counts(),
    "all outcomes": lambda: qml.counts(all_outcomes=True),
    "wire subset reordered": lambda: qml.counts(wires=["c", "a"]),
    "subset all outcomes": lambda: qml.counts(wires=["d", "b"], all_outcomes=True),
    "one wire": lambda: qml.counts(wires="b"),
    "Z": lambda: qml.counts(qml.Z("a")),
    "Z all outcomes": lambda: qml.counts(qml.Z("c"), all_outcomes=True),
    "Z @ Z": lambda: qml.counts(qml.Z("d") @ qml.Z("a")),
    "Hermitian": lambda: qml.counts(qml.Hermitian(np.diag([0.5, -1.5, 2.0, 0.5]), wires=["b", "c"])),
    "Hermitian all outcomes": lambda: qml.counts(qml.Hermitian(np.diag([0.5, -1.5, 2.0, 0.5]), wires=["b", "c"]),
                                                 all_outcomes=True),
    "sum": lambda: qml.counts(0.5 * qml.Z("a") + 0.25 * qml.Z("b") @ qml.Z("d")),
}
WIRES = ["a", "b", "c", "d"]


def _same(ours: dict, theirs: dict) -> None:
    """Equal as PennyLane's dicts are: keys (and their types) in the same order, counts equal."""
    assert list(ours) == list(theirs)
    assert [type(k) for k in ours] == [type(k) for k in theirs]
    assert [int(v) for v in ours.values()] == [int(v) for v in theirs.values()]
    assert [type(v) for v in ours.values()] == [type(v) for v in theirs.values()]


@pytest.mark.parametrize("name", sorted(MEASUREMENTS))
@pytest.mark.parametrize("shots", [1, 7, 3000])
def test_same_dict_as_pennylane_on_one_draw(name, shots):
    mp = MEASUREMENTS[name]()
    assert counted_from_indices(mp)
    rng = np.random.default_rng(shots)
    p = rng.dirichlet(np.full(16, 0.3))  # uneven: some outcomes never drawn
    indices = np.sort(rng.choice(16, size=shots, p=p)) if shots > 1 else np.array([5])
    rng.shuffle(indices)
    position = {w: i for i, w in enumerate(WIRES)}
    _same(counts_dict(mp, indices, position, 4), mp.process_samples(index_bits(indices, 4), qml.wires.Wires(WIRES)))


@pytest.mark.parametrize("n, shots", [(16, 10), (18, 300)])
def test_many_wires_few_shots(n, shots):
    """More outcomes than shots: counted by ``np.unique``, the same dict."""
    mp = qml.counts()
    indices = np.random.default_rng(n).integers(0, 2**n, size=shots)
    wires = qml.wires.Wires(range(n))
    _same(counts_dict(mp, indices, {w: i for i, w in enumerate(wires)}, n), mp.process_samples(index_bits(indices, n), wires))


def test_mid_circuit_values_left_to_pennylane():
    m = qml.measure(0)
    assert not counted_from_indices(qml.counts(op=m))
    assert not counted_from_indices(qml.sample())


def _circuit(n):
    for w in range(n):
        qml.RY(0.3 + 0.4 * w, wires=w)
    for w in range(n - 1):
        qml.CNOT(wires=[w, w + 1])
    qml.RX(0.7, wires=0)


@pytest.mark.parametrize("n", [3, 15])
def test_qnode_format_and_frequencies_against_default_qubit(n):
    """Several counts in one tape (with a basis change), on qhybrid and default.qubit: the same
    keys' types and order rules, totals, and frequencies within five standard errors."""
    shots = 20_000

    def measure():
        _circuit(n)
        return (qml.counts(), qml.counts(wires=[1, 0], all_outcomes=True), qml.counts(qml.X(1)),
                qml.counts(qml.Y(0) @ qml.Z(2), all_outcomes=True), qml.expval(qml.Z(0)))

    ours = qml.QNode(measure, qml.device("qhybrid.cpu", wires=n, seed=3), shots=shots)()
    theirs = qml.QNode(measure, qml.device("default.qubit", wires=n, seed=4), shots=shots)()
    exact = qml.QNode(lambda: (_circuit(n), qml.probs(wires=range(n)), qml.probs(wires=[1, 0]),
                               qml.expval(qml.X(1)), qml.expval(qml.Y(0) @ qml.Z(2)))[1:],
                      qml.device("default.qubit", wires=n))()
    for a, b in zip(ours[:4], theirs[:4]):
        assert sum(a.values()) == sum(b.values()) == shots
        assert list(a) == sorted(a) or list(a) == list(b)  # ascending, or all outcomes in b's order
        assert {type(k) for k in a} == {type(k) for k in b}
        assert {type(v) for v in a.values()} == {type(v) for v in b.values()}
    assert list(ours[1]) == list(theirs[1]) == ["00", "01", "10", "11"]
    assert list(ours[3]) == list(theirs[3])
    se = 5 * 0.5 / np.sqrt(shots)
    probs = np.zeros(2**n)
    for key, c in ours[0].items():
        probs[int(key, 2)] = c / shots
    np.testing.assert_allclose(probs, exact[0], atol=se)
    np.testing.assert_allclose([ours[1][k] / shots for k in ours[1]], exact[1], atol=se)
    for counts, value in ((ours[2], exact[2]), (ours[3], exact[3])):
        assert set(counts) <= {-1.0, 1.0}
        assert abs((counts.get(1.0, 0) - counts.get(-1.0, 0)) / shots - value) < 2 * se


def test_shot_vector_and_broadcast():
    """A shot vector gives one dict per bin; a broadcast circuit one dict per parameter."""
    dev = qml.device("qhybrid.cpu", wires=2, seed=5)

    @qml.qnode(dev, shots=[5, 5, 1000])
    def f(x):
        qml.RX(x, 0)
        return qml.counts(all_outcomes=True), qml.counts(qml.Z(0))

    out = f(np.pi)
    assert len(out) == 3 and all(sum(c.values()) == s for (c, _), s in zip(out, [5, 5, 1000]))
    assert all(c == {"00": 0, "01": 0, "10": s, "11": 0} and z == {-1.0: s} for (c, z), s in zip(out, [5, 5, 1000]))

    @qml.qnode(dev, shots=100)
    def g(x):
        qml.RX(x, 0)
        return qml.counts()

    assert list(g(np.array([0.0, np.pi]))) == [{"00": 100}, {"10": 100}]  # (an array of dicts, as lightning's)


def test_seeded_counts_repeat():
    def run():
        dev = qml.device("qhybrid.cpu", wires=5, seed=11)
        return qml.QNode(lambda: (_circuit(5), qml.counts())[1], dev, shots=1000)()

    assert run() == run()


def test_marginal_draw_keeps_one_draw_per_basis():
    """Expectation values, variances and counts of some wires sharing a basis are drawn from
    those wires' marginal, once: each statistic is the one its counts give (not independent
    draws), and all are within shot noise of the exact values."""
    n, shots = 6, 40_000

    def measure():
        _circuit(n)
        return (qml.expval(qml.Z(4) @ qml.Z(1)), qml.counts(wires=[4, 1]), qml.var(qml.Z(1)),
                qml.expval(qml.X(2) @ qml.Y(5)), qml.counts(qml.X(2) @ qml.Y(5)))

    e, c, v, ex, cx = qml.QNode(measure, qml.device("qhybrid.cpu", wires=n, seed=8), shots=shots)()
    exact = qml.QNode(lambda: (_circuit(n), qml.expval(qml.Z(4) @ qml.Z(1)), qml.probs(wires=[4, 1]),
                               qml.var(qml.Z(1)), qml.expval(qml.X(2) @ qml.Y(5)))[1:],
                      qml.device("default.qubit", wires=n))()
    assert list(c) == sorted(c) and sum(c.values()) == shots
    f = {k: c.get(k, 0) / shots for k in ("00", "01", "10", "11")}
    assert e == pytest.approx(f["00"] + f["11"] - f["01"] - f["10"], abs=1e-12)
    z1 = f["00"] + f["10"] - f["01"] - f["11"]
    assert v == pytest.approx(1 - z1**2, abs=1e-12)
    assert ex == pytest.approx((cx.get(1.0, 0) - cx.get(-1.0, 0)) / shots, abs=1e-12)
    se = 5 / np.sqrt(shots)
    assert abs(e - exact[0]) < se and abs(ex - exact[3]) < se
    np.testing.assert_allclose(list(f.values()), exact[1], atol=se / 2)


@pytest.mark.parametrize("wires", [None, [3, 0], [2]])
def test_samples_of_wires_against_pennylane_processing(wires):
    """``qml.sample(wires=...)``: int64 bits of those wires, as default.qubit's, following the
    probabilities; a seeded device repeats them."""
    n, shots = 4, 20_000
    sample = (lambda: qml.sample()) if wires is None else (lambda: qml.sample(wires=wires))

    def run(name, seed):
        return qml.QNode(lambda: (_circuit(n), sample())[1], qml.device(name, wires=n, seed=seed), shots=shots)()

    ours, theirs = run("qhybrid.cpu", 2), run("default.qubit", 2)
    k = n if wires is None else len(wires)
    assert ours.shape == theirs.shape == ((shots, k) if k > 1 else (shots,)) or ours.shape == theirs.shape == (shots, k)
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, run("qhybrid.cpu", 2))
    probs = qml.QNode(lambda: (_circuit(n), qml.probs(wires=wires if wires else range(n)))[1],
                      qml.device("default.qubit", wires=n))()
    index = ours.reshape(shots, -1) @ (2 ** np.arange(k - 1, -1, -1))
    np.testing.assert_allclose(np.bincount(index, minlength=2**k) / shots, probs, atol=5 * 0.5 / np.sqrt(shots))


def test_mid_circuit_measurement_counts_match_default_qubit_format():
    """Counts of a mid-circuit measurement (deferred: left to PennyLane) beside counts of wires
    and of an observable: the same keys and types as default.qubit, totals and frequencies."""
    shots = 20_000

    def g():
        qml.RX(1.0, 0)
        m = qml.measure(0)
        qml.cond(m, qml.X)(1)
        return qml.counts(op=m), qml.counts(wires=[1]), qml.counts(qml.Z(1), all_outcomes=True)

    ours = qml.QNode(g, qml.device("qhybrid.cpu", wires=3, seed=5), shots=shots, mcm_method="deferred")()
    theirs = qml.QNode(g, qml.device("default.qubit", wires=3, seed=5), shots=shots, mcm_method="deferred")()
    p1 = np.sin(0.5) ** 2
    for a, b in zip(ours, theirs):
        assert list(a) == list(b) and [type(k) for k in a] == [type(k) for k in b]
        assert sum(a.values()) == shots
        assert abs(list(a.values())[1] / shots - p1) < 5 * 0.5 / np.sqrt(shots)
