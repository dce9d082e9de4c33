"""A check shared by the sigmoid's and the I-spline's tests of problems evaluated together (``stacked``)."""

from __future__ import annotations

import numpy as np
import pytest


def assert_stack_matches(problems, points, ks, xs) -> None:
    """``problems[0].stacked(points, ks, xs)`` gives each problem ``ks[i]``'s own value, gradient and Hessian at
    ``xs[i]``, to rounding (relative 1e-14 in the value, 1e-12 in the derivatives), the Hessians symmetric."""
    for (f, der), k, x in zip(problems[0].stacked(points, ks, xs), ks, xs, strict=True):
        f1, der1 = problems[k](x)
        assert f == pytest.approx(f1, rel=1e-14)
        (g, H), (g1, H1) = der(), der1()
        np.testing.assert_allclose(g, g1, rtol=1e-12, atol=1e-14 * np.abs(g1).max())
        np.testing.assert_allclose(H, H1, rtol=1e-12, atol=1e-14 * np.abs(H1).max())
        np.testing.assert_array_equal(H, H.T)
