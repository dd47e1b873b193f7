"""Program capture: qml.capture with a for_loop and a mid-circuit measurement (needs jax; prints
'text capture unavailable' without it, on both devices alike). lightning.qubit does not run
captured programs (NotImplementedError from its missing eval_jaxpr): there the same program
runs with capture off, so the printed numbers stay comparable (said on stderr)."""
import sys

import pennylane as qml

from _report import device_name, exact, text

try:
    import jax

    jax.config.update("jax_enable_x64", True)  # (else captured arguments are float32)
except ImportError:
    text("capture", "unavailable")
    raise SystemExit(0)
dev = qml.device(device_name(), wires=5)  # a spare wire for the deferred measurement


def program(x):
    @qml.for_loop(3)
    def loop(i):
        qml.RX(x * (i + 1), wires=i)
        qml.CNOT([i, i + 1])

    loop()
    m = qml.measure(0)
    qml.cond(m, qml.RY)(0.5, 3)
    return qml.expval(qml.Z(3)), qml.expval(qml.Z(1))


qml.capture.enable()
try:
    values = qml.QNode(program, dev)(0.7)
except NotImplementedError:
    qml.capture.disable()
    print(f"{device_name()} does not run captured programs; ran with capture off", file=sys.stderr)
    values = qml.QNode(program, dev)(0.7)
exact("values", [float(v) for v in values])
