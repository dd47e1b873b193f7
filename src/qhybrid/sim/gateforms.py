"""One-qubit gates written once, for numpy arrays and for Python floats alike.

A *form* is a gate's formula over a maths namespace ``xp``: ``np`` (its parameters ``(P,)``
arrays, for the gate table's builders) or :data:`PY` (Python floats, for the table's ``scalar``
forms, which callers multiplying many 2x2 matrices use without a numpy call per gate). It
returns a matrix's entries ``(a, b, c, d)`` row by row, or a diagonal gate's ``(d0, d1)``.
:mod:`.gates` puts each form in its gate's row through :func:`matrix_of`, :func:`diagonal_of`
and :func:`scalar_of`.
"""
from __future__ import annotations

import cmath
import functools
import math
from types import SimpleNamespace

import numpy as np

#: The forms' maths on Python floats (``np`` is the other namespace they take).
PY = SimpleNamespace(cos=math.cos, sin=math.sin, exp=cmath.exp)


def rx_form(xp, t):
    h = t / 2
    c, s = xp.cos(h), xp.sin(h)
    return c, -1j * s, -1j * s, c


def ry_form(xp, t):
    h = t / 2
    c, s = xp.cos(h), xp.sin(h)
    return c, -s, s, c


def rot_form(xp, phi, theta, omega):
    h = theta / 2
    c, s = xp.cos(h), xp.sin(h)
    return (xp.exp(-0.5j * (phi + omega)) * c, -xp.exp(0.5j * (phi - omega)) * s,
            xp.exp(-0.5j * (phi - omega)) * s, xp.exp(0.5j * (phi + omega)) * c)


def rz_form(xp, t):
    """diag(e^{-i t/2}, e^{i t/2})."""
    e = xp.exp(-0.5j * t)
    return e, e.conjugate()


def phase_form(xp, t):
    """diag(1, e^{i t})."""
    return 1 + 0j, xp.exp(1j * t)


def matrix_of(form):
    """The table's ``matrix`` builder of a matrix form: ``(P, 2, 2)`` from ``(P,)`` parameters
    (``P`` the longest; the others of length 1)."""
    def build(p, k):
        out = np.empty((max(map(len, p)), 2, 2), dtype=complex)
        out[:, 0, 0], out[:, 0, 1], out[:, 1, 0], out[:, 1, 1] = form(np, *p)
        return out

    return build


def diagonal_of(form):
    """The table's ``diagonal`` builder of a diagonal form: ``(P, 2)`` from ``(P,)`` parameters."""
    def build(p, k):
        out = np.empty((len(p[0]), 2), dtype=complex)
        out[:, 0], out[:, 1] = form(np, *p)
        return out

    return build


def scalar_of(form):
    """The table's ``scalar`` of a form: its entries (a matrix's ``(a, b, c, d)``, a diagonal's
    ``(d0, d1)``) from Python floats, as Python numbers."""
    return functools.partial(form, PY)
