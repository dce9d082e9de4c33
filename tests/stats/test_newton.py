"""The active-set Newton solver on problems with known answers."""

import numpy as np
import pytest

from harness.stats._newton import active_set_newton

# 0 <= x0 <= x1 <= 1, as the sigmoid's (y0, h)
TRIANGLE = (np.array([[-1.0, 0.0], [0.0, 1.0], [1.0, -1.0]]), np.array([0.0, 1.0, 0.0]))


def _quadratic(center, scale=(1.0, 1.0)):
    """``sum_j scale_j (x_j - center_j)**2`` in the solver's calling convention."""
    c, w = np.asarray(center, float), np.asarray(scale, float)
    return lambda x: (float(w @ (x - c) ** 2), lambda: (2 * w * (x - c), np.diag(2 * w)))


def _rosenbrock(x):
    f = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2

    def derivatives():
        g = np.array([-2 * (1 - x[0]) - 400 * x[0] * (x[1] - x[0] ** 2), 200 * (x[1] - x[0] ** 2)])
        H = np.array([[2 - 400 * x[1] + 1200 * x[0] ** 2, -400 * x[0]], [-400 * x[0], 200.0]])
        return g, H

    return float(f), derivatives


@pytest.mark.parametrize(
    "center, expected, active",
    [
        ((0.3, 0.6), (0.3, 0.6), ()),  # inside: one Newton step
        ((-1.0, 2.0), (0.0, 1.0), (0, 1)),  # corner x0 = 0, x1 = 1
        ((0.8, 0.2), (0.5, 0.5), (2,)),  # projection onto the edge x0 = x1
        ((-0.5, 0.5), (0.0, 0.5), (0,)),
    ],
)
def test_quadratic_on_a_triangle(center, expected, active):
    res = active_set_newton(_quadratic(center), np.array([0.2, 0.4]), *TRIANGLE)
    np.testing.assert_allclose(res.x, expected, atol=1e-15)
    assert res.converged and res.active == active
    assert res.nit <= 1 + len(active)  # one exact step per working set


def test_a_badly_scaled_quadratic_is_solved_in_one_step_or_two():
    # Newton is invariant to scaling: 1e6 between the two curvatures changes nothing
    # (one step; a second may polish the last ulp, the minimum value being 0).
    res = active_set_newton(_quadratic((0.3, 0.6), (1e6, 1.0)), np.array([0.9, 0.95]), *TRIANGLE)
    np.testing.assert_allclose(res.x, (0.3, 0.6), atol=1e-15)
    assert res.nit <= 2


def test_rosenbrock_from_the_classic_start():
    # Indefinite Hessians on the way (e.g. at x1 > x0**2 + 1/200): the step must still descend.
    A, b = np.zeros((1, 2)), np.zeros(1)  # no constraint (0 <= 0 always holds)
    res = active_set_newton(_rosenbrock, np.array([-1.2, 1.0]), A, b)
    np.testing.assert_allclose(res.x, (1.0, 1.0), atol=1e-10)
    assert res.converged and res.fun < 1e-20


def test_rosenbrock_with_an_active_bound_has_a_positive_multiplier():
    # x0 <= 0.5: the minimum is x = (0.5, 0.25), f = 0.25, df/dx0 = -1 there (pushes outward).
    res = active_set_newton(_rosenbrock, np.array([-1.2, 1.0]), np.array([[1.0, 0.0]]), np.array([0.5]))
    np.testing.assert_allclose(res.x, (0.5, 0.25), atol=1e-12)
    assert res.fun == pytest.approx(0.25, abs=1e-15) and res.converged and res.active == (0,)


def test_a_constraint_entered_early_is_dropped_again():
    # The straight path from the start hits x0 = 0, but the minimum is inside.
    f = _quadratic((0.4, 0.5), (1.0, 50.0))
    res = active_set_newton(
        f, np.array([0.05, 0.95]), np.array([[-1.0, 0.0], [0.0, 1.0], [1.0, -1.0]]), np.array([0.0, 1.0, 0.0])
    )
    np.testing.assert_allclose(res.x, (0.4, 0.5), atol=1e-14)
    assert res.converged and res.active == ()
