"""Program capture: qml.capture with a for_loop and a mid-circuit measurement (needs jax; prints
'text capture unavailable' without it, on both devices alike)."""
import pennylane as qml

from _report import device_name, exact, text

try:
    import jax  # noqa: F401
except ImportError:
    text("capture", "unavailable")
    raise SystemExit(0)
qml.capture.enable()
dev = qml.device(device_name(), wires=4)


@qml.qnode(dev)
def circuit(x):
    @qml.for_loop(3)
    def loop(i):
        qml.RX(x * (i + 1), wires=i)
        qml.CNOT([i, i + 1])

    loop()
    m = qml.measure(0)
    qml.cond(m, qml.RY)(0.5, 3)
    return qml.expval(qml.Z(3)), qml.expval(qml.Z(1))


exact("values", [float(v) for v in circuit(0.7)])
exact("grad", float(jax.grad(lambda x: circuit(x)[0])(0.7)))
