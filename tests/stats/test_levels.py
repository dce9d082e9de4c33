"""The multi-start's screen (``harness.stats._levels``) and the grouping of points by ``z`` (``_ties``).

The screen sets ``(y0, h)`` of many sigmoid shapes at once to their optimum on ``0 <= y0 <= h <= 1``.
It must reach the KKT point of each shape's two-variable problem (the point the active-set Newton
solver reaches on it alone), and its two savings (a first pass on every 8th point; rows that provably
cannot be among the ``keep`` lowest stopped early) must not change the minima it keeps.
"""

import numpy as np
import pytest
from scipy.special import expit

from harness.stats._levels import _evaluate, _lower_bounds, _Shapes, _triangle_minimum, optimal_levels
from harness.stats._newton import active_set_newton
from harness.stats._ties import Ties
from harness.stats.pinball import LossPoints, smoothed_pinball_loss

# 0 <= y0 <= h <= 1 as rows of A v <= b: -y0 <= 0, h <= 1, y0 - h <= 0
TRIANGLE = (np.array([[-1.0, 0.0], [0.0, 1.0], [1.0, -1.0]]), np.array([0.0, 1.0, 0.0]))


def _data(n=1600, distinct=160, seed=0):
    """Points in increasing ``z`` with ``distinct`` values (ten points each at the defaults), ``y`` in [0, 1]."""
    rng = np.random.default_rng(seed)
    z = np.sort(np.repeat(rng.uniform(-1.0, 4.0, distinct), n // distinct))
    y = np.clip(0.1 + 0.6 * expit(-2.0 + 1.2 * z) + rng.normal(0.0, 0.08, z.size), 0.0, 1.0)
    return z, y, rng


def _shapes(values, rng, k):
    """``k`` sigmoid shapes at the distinct ``z``: midpoints inside the data, slopes 0.1 to 10 (one very flat)."""
    mid = rng.uniform(values.min(), values.max(), k)
    beta = np.exp(rng.uniform(np.log(0.1), np.log(10.0), k))
    beta[0] = 1e-3  # s nearly constant: the optimum sits on an edge or a vertex
    return expit(beta[:, None] * (values[None, :] - mid[:, None]))


def _problem(grouped, tau=0.9, kappa=25.0, seed=0):
    z, y, rng = _data(seed=seed)
    ties = Ties.of(z) if grouped else Ties.none()
    assert (ties.sizes is not None) == grouped
    return LossPoints(y, tau, kappa, ties), (ties.values if grouped else z), z, y, rng


def test_ties_group_runs_of_equal_values():
    z = np.array([0.0, 0.0, 1.0, 2.0, 2.0, 2.0, 5.0, 5.0])
    t = Ties.of(z)
    np.testing.assert_array_equal(t.values, [0.0, 1.0, 2.0, 5.0])
    np.testing.assert_array_equal(t.starts, [0, 2, 3, 6])
    np.testing.assert_array_equal(t.sizes, [2, 1, 3, 2])
    np.testing.assert_array_equal(t.spread(np.array([10.0, 11.0, 12.0, 13.0])), [10, 10, 11, 12, 12, 12, 13, 13])
    np.testing.assert_array_equal(t.sums(np.arange(8.0)), [1.0, 2.0, 12.0, 13.0])
    # leading axes are kept (a row per curve)
    np.testing.assert_array_equal(t.sums(np.ones((2, 8))), [[2, 1, 3, 2], [2, 1, 3, 2]])
    # more than half the values distinct: not grouped, spreading and summing leave arrays as they are
    few = Ties.of(np.array([0.0, 1.0, 1.0, 2.0, 3.0]))
    assert few.starts is None and few.sizes is None and few.values.size == 5
    v = np.arange(5.0)
    assert few.spread(v) is v and few.sums(v) is v


@pytest.mark.parametrize("grouped", [False, True], ids=["per-point", "per-distinct-z"])
def test_screen_value_gradient_and_hessian(grouped):
    # J(y0, h) of each shape against the loss summed point by point, its derivatives against
    # central differences of that J (error of order h**2 J''' ~ 1e-12 * kappa**2 at h = 1e-6)
    points, values, z, y, rng = _problem(grouped)
    s = _shapes(values, rng, 6)
    shapes = _Shapes(s)
    v = np.column_stack([rng.uniform(0.0, 0.3, 6), rng.uniform(0.5, 1.0, 6)])
    f, g, (h00, h01, h11) = _evaluate(shapes, points, v)
    s_points = points.ties.spread(s)
    for k in range(6):
        q = v[k, 0] * (1.0 - s_points[k]) + v[k, 1] * s_points[k]
        assert f[k] == pytest.approx(np.mean(smoothed_pinball_loss(y - q, 0.9, 25.0)), rel=1e-13)
    eps = 1e-6
    for j, e in enumerate(np.eye(2)):
        up, down = _evaluate(shapes, points, v + eps * e), _evaluate(shapes, points, v - eps * e)
        np.testing.assert_allclose(g[:, j], (up[0] - down[0]) / (2 * eps), rtol=1e-7, atol=1e-9)
        H_fd = (up[1] - down[1]) / (2 * eps)
        np.testing.assert_allclose([h00, h01][j], H_fd[:, 0], rtol=1e-6)
        np.testing.assert_allclose([h01, h11][j], H_fd[:, 1], rtol=1e-6)


def _kkt_gap(v, g, H, f, ftol):
    """Check that ``v`` is a KKT point of the triangle to the Newton test's tolerance: multipliers of the
    constraints that hold exactly non-negative, and the gradient in the free directions no larger than a
    Newton decrement of ``ftol * |f|`` allows (``g_r' H_r^-1 g_r / 2 <= ftol |f|``)."""
    A, b = TRIANGLE
    active = np.flatnonzero(A @ v == b)
    if active.size:
        mult = np.linalg.lstsq(A[active].T, -g, rcond=None)[0]
        assert np.all(mult >= 0.0), (v, mult)
    if active.size < 2:  # a free direction: the null space of the active rows
        Z = np.linalg.svd(A[active])[2][active.size :].T if active.size else np.eye(2)
        gr, Hr = Z.T @ g, Z.T @ H @ Z
        assert 0.5 * gr @ np.linalg.solve(Hr, gr) <= 10 * ftol * abs(f), (v, gr)


@pytest.mark.parametrize("grouped", [False, True], ids=["per-point", "per-distinct-z"])
def test_levels_are_the_kkt_points_the_active_set_solver_reaches(grouped):
    points, values, z, y, rng = _problem(grouped)
    s = _shapes(values, rng, 12)
    v0 = np.column_stack([np.full(12, 0.2), np.full(12, 0.8)])
    ftol = 1e-14
    levels = optimal_levels(s, points, v0, ftol=ftol, thin=1)
    assert levels.converged.all()
    f, g, (h00, h01, h11) = _evaluate(_Shapes(s), points, levels.v)
    np.testing.assert_allclose(f, levels.fun, rtol=1e-15)
    on_edge = 0
    for k in range(12):
        _kkt_gap(levels.v[k], g[k], np.array([[h00[k], h01[k]], [h01[k], h11[k]]]), f[k], ftol)
        on_edge += bool(np.any(TRIANGLE[0] @ levels.v[k] == TRIANGLE[1]))

        # the same problem solved alone by the active-set Newton solver (the screen's one-shape predecessor)
        def fun(v, k=k):
            fk, gk, (a, b_, c) = _evaluate(_Shapes(s[k : k + 1]), points, v[None, :])
            return float(fk[0]), lambda: (gk[0], np.array([[a[0], b_[0]], [b_[0], c[0]]]))

        alone = active_set_newton(fun, v0[k], *TRIANGLE, ftol=ftol)
        assert alone.converged
        assert levels.fun[k] <= alone.fun + 1e-15 * abs(alone.fun), k
        np.testing.assert_allclose(levels.v[k], alone.x, atol=1e-6)
    assert on_edge  # the flat shape's optimum lies on the triangle's edge: that branch is met


def test_thinning_and_keep_leave_the_kept_minima_as_they_are():
    points, values, z, y, rng = _problem(True)
    s = _shapes(values, rng, 30)
    v0 = np.column_stack([np.full(30, 0.15), np.full(30, 0.75)])
    ftol = 1e-12
    plain = optimal_levels(s, points, v0, ftol=ftol, thin=1)
    thinned = optimal_levels(s, points, v0, ftol=ftol)  # every 8th point first (1600 points >= 50 * 8)
    assert plain.converged.all() and thinned.converged.all()
    # one minimum per shape: reached from another start, the same to the stopping test's precision
    np.testing.assert_allclose(thinned.fun, plain.fun, rtol=10 * ftol)
    np.testing.assert_allclose(thinned.v, plain.v, atol=1e-5)
    keep = 3
    kept = optimal_levels(s, points, v0, ftol=ftol, keep=keep)
    best = np.argsort(plain.fun)[:keep]
    np.testing.assert_array_equal(np.argsort(kept.fun)[:keep], best)
    np.testing.assert_allclose(kept.fun[best], plain.fun[best], rtol=10 * ftol)
    # the others stopped unsolved where they provably could not enter: their value (an upper bound
    # on their minimum) is above the kept ones, and at least one was stopped before converging
    others = np.setdiff1d(np.arange(30), best)
    assert np.all(kept.fun[others] >= plain.fun[others] - 10 * ftol * np.abs(plain.fun[others]))
    assert not kept.converged[others].all()
    assert kept.nit.sum() < thinned.nit.sum() + plain.nit.sum()


def test_the_bound_that_stops_a_row_is_below_its_minimum():
    # J convex: J(w) >= J(v) + g'(w - v) everywhere, so the least of the tangent plane over the triangle
    # (at a vertex) is a lower bound on min J, from any ``v`` in the triangle
    points, values, z, y, rng = _problem(True)
    s = _shapes(values, rng, 30)
    minimum = optimal_levels(s, points, np.array([0.2, 0.8]), ftol=1e-13, thin=1).fun
    for _ in range(20):
        y0 = rng.uniform(0.0, 1.0, 30)
        v = np.column_stack([y0, rng.uniform(y0, 1.0)])
        f, g, _ = _evaluate(_Shapes(s), points, v)
        bound = f + _lower_bounds(v, g)
        assert np.all(bound <= minimum * (1 + 1e-12)), np.max(bound - minimum)


def test_the_model_minimum_over_the_triangle():
    # a convex quadratic model, strictly or not (a rank-one Hessian: a flat valley), against the
    # active-set solver on the same quadratic (exact for a quadratic in a step per working set)
    rng = np.random.default_rng(3)
    for trial in range(200):
        v = np.sort(rng.uniform(0.0, 1.0, 2))
        g = rng.normal(0.0, 1.0, 2)
        R = rng.normal(0.0, 1.0, (1 if trial % 4 == 0 else 2, 2))
        H = R.T @ R

        def model(w, v=v, g=g, H=H):
            d = w - v
            return float(g @ d + 0.5 * d @ H @ d), lambda: (g + H @ d, H)

        (w0, w1), decrease = _triangle_minimum(*v, *g, H[0, 0], H[0, 1], H[1, 1])
        w = np.array([w0, w1])
        assert -1e-15 <= w0 <= w1 <= 1.0 + 1e-15, (trial, w)
        assert decrease == pytest.approx(-model(w)[0], rel=1e-12, abs=1e-15)
        ref = active_set_newton(model, v, *TRIANGLE, ftol=1e-15)
        assert -model(w)[0] >= -ref.fun - 1e-12 * max(1.0, abs(ref.fun)), trial


@pytest.mark.parametrize("grouped", [False, True], ids=["per-point", "per-distinct-z"])
def test_weighted_screen_is_the_screen_of_the_rows_repeated(grouped):
    # integer weights (the repeated factors) and the same halved (w @ log1p(e)): the value and derivatives of the
    # rows repeated, and the same optimum
    z, y, rng = _data()
    w = rng.integers(1, 4, z.size)
    zr, yr = np.repeat(z, w), np.repeat(y, w)
    tie = Ties.of if grouped else (lambda _: Ties.none())
    repeated = LossPoints(yr, 0.9, 25.0, tie(zr))
    values = repeated.ties.values if grouped else None
    s = _shapes(values if grouped else z, rng, 5)
    s_rep = s if grouped else s.repeat(w, axis=1)
    v = np.column_stack([rng.uniform(0.0, 0.3, 5), rng.uniform(0.5, 1.0, 5)])
    ref = _evaluate(_Shapes(s_rep), repeated, v)
    ref_levels = optimal_levels(s_rep, repeated, v, ftol=1e-12)
    for scale in (1.0, 0.5):
        points = LossPoints(y, 0.9, 25.0, tie(z), weights=scale * w)
        got = _evaluate(_Shapes(s), points, v)
        np.testing.assert_allclose(got[0], ref[0], rtol=1e-12)
        np.testing.assert_allclose(got[1], ref[1], rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(got[2], ref[2], rtol=1e-10)
        levels = optimal_levels(s, points, v, ftol=1e-12)
        np.testing.assert_allclose(levels.fun, ref_levels.fun, rtol=1e-12)
        np.testing.assert_allclose(levels.v, ref_levels.v, atol=1e-5)  # the flat shape's optimum is shallow
