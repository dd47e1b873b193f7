"""The circuit-centric classifier (CCQC) of the DressedQNN, as data and gate matrices.

Schuld, Bocharov, Svore, Wiebe, "Circuit-centric quantum classifiers",
arXiv:1804.00633 (figure 4), in the form of the Braket hybrid-jobs example
"Parallelize training for QML" (``qml_script/quantum_circuit.py``), which this
module follows gate for gate. On ``n`` wires with inputs ``x`` (``n`` angles)
and weights ``w_layer1``, ``w_layer2`` of shape ``(2, n, 3)`` and
``rotation`` of shape ``(3,)``:

1. AngleEmbedding: ``RX(x[i])`` on wire ``i`` (``RY``/``RZ`` on request, as
   ``qml.AngleEmbedding(rotation=...)``).
2. Entangling layer with range ``r`` (``r = 1`` with ``w_layer1``, then
   ``r = 3`` with ``w_layer2``), weights ``w``:

   - ``Rot(*w[0, i])`` on every wire ``i``;
   - ``n`` controlled rotations along a chain that starts at wire 0 and steps
     *backwards* by ``r``: control ``c_0 = 0``, target ``t_k = (c_k - r) mod
     n``, next control ``c_{k+1} = t_k``; gate ``k`` is
     ``CRot(*w[1, k])`` on ``[c_k, t_k]`` (the example applies
     ``qml.CRot.compute_decomposition``, which equals ``CRot`` exactly).
     When ``gcd(n, r) > 1`` the chain revisits its wires, as in the example.

3. ``Rot(*rotation)`` on wire 0, then the expectation of ``PauliZ(0)``.

``r mod n`` must not be 0 (control and target would coincide).

Everything below is plain torch on small tensors, differentiable by autograd:
the gate matrices are built here and handed to the adjoint kernel
(:mod:`qhybrid.qml.adjoint`), which returns the gradients of the matrices.
"""
from __future__ import annotations

import torch

EMBEDDINGS = ("X", "Y", "Z")


def chain_pairs(n_wires: int, rng: int) -> tuple[tuple[int, int], ...]:
    """The ``(control, target)`` pairs of one entangling layer's controlled rotations.

    Example:
        >>> chain_pairs(4, 1)
        ((0, 3), (3, 2), (2, 1), (1, 0))
    """
    pairs = []
    control = 0
    for _ in range(n_wires):
        target = (control - rng) % n_wires
        pairs.append((control, target))
        control = target
    return tuple(pairs)


def _phase(angle: torch.Tensor) -> torch.Tensor:
    """``exp(i * angle)`` for a real tensor, differentiable."""
    return torch.complex(torch.cos(angle), torch.sin(angle))


def rot_matrices(params: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``Rot(phi, theta, omega) = RZ(omega) RY(theta) RZ(phi)`` for ``params`` ``(..., 3)``.

    Returns:
        ``(..., 2, 2)`` complex matrices of ``dtype``.
    """
    phi, theta, omega = params.unbind(-1)
    c = torch.cos(theta / 2).to(dtype)
    s = torch.sin(theta / 2).to(dtype)
    plus = _phase((phi + omega) / 2).to(dtype)
    minus = _phase((phi - omega) / 2).to(dtype)
    row0 = torch.stack([plus.conj() * c, -minus * s], dim=-1)
    row1 = torch.stack([minus.conj() * s, plus * c], dim=-1)
    return torch.stack([row0, row1], dim=-2)


def embedding_vectors(inputs: torch.Tensor, rotation: str, dtype: torch.dtype) -> torch.Tensor:
    """``R(x)|0>`` for every angle in ``inputs`` ``(...,)``: ``(..., 2)`` complex vectors."""
    half = inputs / 2
    cos = torch.cos(half).to(dtype)
    sin = torch.sin(half).to(dtype)
    if rotation == "X":
        return torch.stack([cos, -1j * sin], dim=-1)
    if rotation == "Y":
        return torch.stack([cos, sin], dim=-1)
    return torch.stack([_phase(-half).to(dtype), torch.zeros_like(cos)], dim=-1)


def z_observable(rotation: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``Rot(rotation)^dagger Z Rot(rotation)``: the final rotation folded into the observable."""
    return z_observable_of(rot_matrices(rotation, dtype))


def z_observable_of(rot: torch.Tensor) -> torch.Tensor:
    """``rot^dagger Z rot`` for a ``(2, 2)`` matrix (:func:`z_observable` of its angles)."""
    z = torch.tensor([1.0, -1.0], dtype=rot.dtype, device=rot.device)
    return rot.conj().transpose(-1, -2) @ (z[:, None] * rot)
