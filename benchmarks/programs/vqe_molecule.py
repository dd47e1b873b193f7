"""VQE on H2's 4-qubit Hamiltonian (STO-3G coefficients at 0.74 A), Hartree-Fock state and a
DoubleExcitation, gradient descent."""
import pennylane as qml
from pennylane import numpy as np

from _report import device_name, exact

coeffs = [-0.04207898, 0.17771287, 0.17771287, -0.24274281, -0.24274281, 0.17059738, 0.04475014,
          -0.04475014, -0.04475014, 0.04475014, 0.12293305, 0.16768319, 0.16768319, 0.12293305, 0.17627641]
Z, X, Y = qml.Z, qml.X, qml.Y
ops = [qml.Identity(0), Z(0), Z(1), Z(2), Z(3), Z(0) @ Z(1), Y(0) @ X(1) @ X(2) @ Y(3),
       Y(0) @ Y(1) @ X(2) @ X(3), X(0) @ X(1) @ Y(2) @ Y(3), X(0) @ Y(1) @ Y(2) @ X(3), Z(0) @ Z(2),
       Z(0) @ Z(3), Z(1) @ Z(2), Z(1) @ Z(3), Z(2) @ Z(3)]
H = qml.Hamiltonian(coeffs, ops)
dev = qml.device(device_name(), wires=4)


@qml.qnode(dev)
def energy(theta):
    qml.BasisState(np.array([1, 1, 0, 0]), wires=range(4))
    qml.DoubleExcitation(theta[0], wires=[0, 1, 2, 3])
    qml.SingleExcitation(theta[1], wires=[0, 2])
    return qml.expval(H)


theta = np.array([0.0, 0.0], requires_grad=True)
opt = qml.GradientDescentOptimizer(stepsize=0.4)
energies = []
for _ in range(10):
    theta, e = opt.step_and_cost(energy, theta)
    energies.append(e)
exact("energies", energies)
exact("theta", theta)
