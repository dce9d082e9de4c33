"""The active-set Newton solver on problems with known answers."""

import numpy as np
import pytest

from harness.stats._newton import active_set_newton, solve_together

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


def _valley(x):
    """``exp(-x0) + (x1 - 1)**2``: the infimum over ``x0`` lies at infinity, and each Newton step on
    ``exp(-x0)`` advances ``x0`` by exactly 1 (``-f'/f'' = 1``), taking twice the decrease its model promised."""
    e = float(np.exp(-x[0]))
    return e + (x[1] - 1.0) ** 2, lambda: (np.array([-e, 2.0 * (x[1] - 1.0)]), np.diag([e, 2.0]))


def test_a_valley_out_to_a_bound_is_followed_to_the_bound_not_crawled():
    # x0 <= 500: plain Newton needs about 500 steps of length 1 (more than maxiter); doubling the step while
    # f falls reaches the bound in a handful, lands on it exactly, and the bound's multiplier is positive.
    A, b = np.array([[1.0, 0.0]]), np.array([500.0])
    res = active_set_newton(_valley, np.array([0.0, 0.0]), A, b, maxiter=50)
    assert res.converged and res.active == (0,)
    assert res.x[0] == 500.0 and res.x[1] == pytest.approx(1.0, abs=1e-15)
    assert res.nit <= 10


def test_a_valley_with_a_minimum_far_out_stops_at_it():
    # exp(-x0) + 1e-9 x0**2 has its minimum where exp(-x0) = 2e-9 x0, near x0 = 17; doubling overshoots
    # it (f rises past 34) and Newton's quadratic convergence finishes the solve.
    def f(x):
        e = float(np.exp(-x[0]))
        return e + 1e-9 * x[0] ** 2, lambda: (np.array([-e + 2e-9 * x[0]]), np.array([[e + 2e-9]]))

    res = active_set_newton(f, np.array([0.0]), np.zeros((1, 1)), np.zeros(1), maxiter=50)
    g, _ = f(res.x)[1]()
    assert res.converged and abs(g[0]) < 1e-9 * 2e-9 * res.x[0]  # the two terms of f' cancel to 1e-9
    assert 15.0 < res.x[0] < 20.0 and res.nit <= 10  # plain Newton: a step of about 1 each, 17 or more


def test_a_quadratic_never_expands():
    # The model is exact, so the decrease equals the promise: one step, one extra objective value.
    res = active_set_newton(_quadratic((0.3, 0.6)), np.array([0.2, 0.4]), *TRIANGLE)
    assert res.nit == 1 and res.nfev == 2


def test_the_faces_own_step_reaches_a_bound_a_curved_valley_leads_to():
    # Rosenbrock's valley bends towards x0 = 0.5: the straight Newton step overshoots the bound and the cut
    # step fails Armijo. Halving alone took 9 steps and 22 values from the classic start; from the point where
    # the step meets the bound, the Newton step along it is taken at once.
    res = active_set_newton(_rosenbrock, np.array([-1.2, 1.0]), np.array([[1.0, 0.0]]), np.array([0.5]))
    np.testing.assert_allclose(res.x, (0.5, 0.25), atol=1e-12)
    assert res.converged and res.active == (0,)
    assert res.nit <= 3 and res.nfev <= 6


def test_a_start_on_the_bounds_of_the_solution_keeps_them():
    # started at the constrained minimum (on x0 = 0, x1 = 1): no step, one value, both bounds held
    res = active_set_newton(_quadratic((-1.0, 2.0)), np.array([0.0, 1.0]), *TRIANGLE)
    assert res.converged and res.active == (0, 1) and res.nit == 0 and res.nfev == 1
    # on a bound the solution does not hold: dropped once the face is solved, the interior minimum reached
    res = active_set_newton(_quadratic((0.3, 0.6)), np.array([0.0, 0.6]), *TRIANGLE)
    np.testing.assert_allclose(res.x, (0.3, 0.6), atol=1e-15)
    assert res.converged and res.active == ()


def test_constraints_met_at_the_start_that_are_dependent_are_not_held():
    # the same bound twice: met at the start, not independent, so the solve starts with none and still ends
    # on one of them
    A, b = np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([0.5, 0.5])
    res = active_set_newton(_quadratic((1.0, 0.2)), np.array([0.5, 0.0]), A, b)
    np.testing.assert_allclose(res.x, (0.5, 0.2), atol=1e-15)
    assert res.converged and len(res.active) == 1


@pytest.mark.parametrize("free", [(2,), (1, 3)])
def test_the_closed_form_step_is_the_eigen_decompositions(free):
    # on one or two free coordinates (bounds held), the step in plain floats equals the eigen-decomposition's
    # where the reduced Hessian is positive definite above the floor; elsewhere it defers to it
    from harness.stats._newton import _newton_step, _small_step

    rng = np.random.default_rng(11)
    Z = np.eye(4)[:, list(free)]
    for _ in range(50):
        R = rng.normal(size=(4, 4))
        H, g = R @ R.T, rng.normal(size=4)
        p = _small_step(g, H, free)
        np.testing.assert_allclose(p, _newton_step(g, H, Z, None), rtol=1e-10, atol=1e-14)
        assert np.all(np.delete(p, list(free)) == 0.0)
    indefinite = np.diag([1.0, -2.0, 3.0, -4.0])
    assert _small_step(np.ones(4), indefinite, (1, 3) if len(free) == 2 else (1,)) is None
    flat = np.diag([1.0, 1e-12, 1.0, 1.0])  # below the floor: 1e-12 < 1e-10 * 1
    assert len(free) == 1 or _small_step(np.ones(4), flat, (0, 1)) is None


def test_solves_together_take_the_steps_each_takes_alone():
    # problems on the same constraints finishing after different numbers of steps, evaluated in lockstep
    funs = [_rosenbrock, _quadratic((0.3, 0.6)), _quadratic((-1.0, 2.0)), _quadratic((0.3, 0.6), (1e6, 1.0))]
    starts = [np.array([0.1, 0.9]), np.array([0.2, 0.4]), np.array([0.2, 0.4]), np.array([0.9, 0.95])]
    asked = []

    def evaluate(ks, xs):
        asked.append(list(ks))
        return [funs[k](x) for k, x in zip(ks, xs)]

    together = solve_together(evaluate, starts, *TRIANGLE)
    for res, fun, x0 in zip(together, funs, starts):
        alone = active_set_newton(fun, x0, *TRIANGLE)
        np.testing.assert_array_equal(res.x, alone.x)
        assert (res.fun, res.nit, res.nfev, res.converged, res.active) == (
            alone.fun,
            alone.nit,
            alone.nfev,
            alone.converged,
            alone.active,
        )
    assert asked[0] == [0, 1, 2, 3] and len(asked[-1]) == 1  # the quick ones leave, the slowest goes on
    assert sum(map(len, asked)) == sum(r.nfev for r in together)
