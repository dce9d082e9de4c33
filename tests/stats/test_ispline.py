"""I-spline basis and the monotone I-spline quantile estimator."""

import numpy as np
import pytest
from stacks import assert_stack_matches

from harness.stats.ispline import (
    ISplineQuantileRegressor,
    _Natural,
    fit_together,
    ispline_basis,
    ispline_basis_derivative,
    ispline_objective,
    quantile_breakpoints,
)
from harness.stats.pinball import LossPoints

pytestmark = pytest.mark.filterwarnings("error")

BP = np.array([-0.5, 1.0, 1.3, 3.0])  # uneven intervals on purpose
X = np.linspace(-2.0, 4.5, 3001)


@pytest.mark.parametrize("degree", [2, 3, 4])
def test_basis_monotone_zero_below_one_above(degree):
    B = ispline_basis(X, BP, degree)
    # interior knots + degree functions (2 + degree here)
    assert B.shape == (X.size, BP.size - 2 + degree)
    assert np.all(np.diff(B, axis=0) >= -1e-12)  # non-decreasing in z
    assert np.allclose(B[BP[0] >= X], 0.0, atol=1e-14)  # 0 at and below the first knot
    assert np.allclose(B[BP[-1] <= X], 1.0, atol=1e-14)  # 1 at and above the last knot
    assert B.min() >= -1e-14 and B.max() <= 1 + 1e-14


def test_basis_is_the_integral_of_normalised_m_splines():
    # definition: I_j(z) = int_{first knot}^{z} M_j, and each M_j integrates to 1
    x = np.linspace(BP[0], BP[-1], 20001)
    M = ispline_basis_derivative(x, BP)
    cumulative = np.vstack([np.zeros(M.shape[1]), np.cumsum(0.5 * (M[1:] + M[:-1]) * np.diff(x)[:, None], axis=0)])
    assert np.allclose(cumulative[-1], 1.0, atol=1e-6)  # trapezoid error O(h^2) ~ 1e-8 * |M''|
    assert np.allclose(cumulative, ispline_basis(x, BP), atol=1e-6)
    assert np.all(M >= 0)  # M-splines are non-negative, hence the I-splines are monotone


def test_basis_derivative_matches_finite_differences():
    x = np.linspace(BP[0] + 1e-3, BP[-1] - 1e-3, 500)
    h = 1e-6
    fd = (ispline_basis(x + h, BP) - ispline_basis(x - h, BP)) / (2 * h)
    # cubic I-splines are C^2 at simple knots, so central differences are accurate to O(h^2)
    assert np.allclose(ispline_basis_derivative(x, BP), fd, atol=1e-6)
    # flat outside the knots
    assert np.all(ispline_basis_derivative([-3.0, 5.0], BP) == 0.0)


def test_breakpoints_drop_tied_quantiles():
    z = np.r_[np.zeros(50), np.ones(3), 2.0]  # the 1/3 and 2/3 quantiles are both 0 = min
    assert quantile_breakpoints(z, 3).tolist() == [0.0, 2.0]
    with pytest.raises(ValueError, match="single distinct"):
        quantile_breakpoints(np.ones(5), 3)


def test_breakpoints_are_numpys_linear_quantiles_bit_for_bit():
    rng = np.random.default_rng(0)
    for trial in range(300):
        n = int(rng.integers(2, 600))
        z = rng.normal(size=n) * 10 ** rng.uniform(-3, 3)
        if trial % 2:  # ties, as a leaderboard's compute
            z = np.repeat(np.round(z[: max(2, n // 4)], 1), 4)
        k = int(rng.integers(1, 9))
        want = np.unique(np.quantile(z, np.linspace(0.0, 1.0, k + 1)))
        if want.size > 1:
            assert np.array_equal(quantile_breakpoints(z, k), want), (n, k)


def _data(seed=0, ties=False):
    rng = np.random.default_rng(seed)
    z = rng.uniform(-0.5, 3.0, 200)
    if ties:  # 40 distinct values, five points each, as a leaderboard's compute is shared by fine-tunes
        z = np.repeat(z[:40], 5)
    y = np.clip(0.1 + 0.2 * z + rng.normal(0, 0.05, 200), 0, 1)
    return z, y, rng


def test_fit_leaves_about_one_minus_tau_above_and_respects_constraints():
    rng = np.random.default_rng(5)
    n = 4000
    z = rng.uniform(0, 3, n)
    y = np.clip(0.15 + 0.5 / (1 + np.exp(-2 * (z - 1.5))) + rng.normal(0, 0.05, n), 0, 1)
    # kappa = 1000: smoothing scale 1e-3 << noise sd 0.05, so the fit is close to a sharp 0.98-quantile
    # (at kappa = 50 it would leave about 0.6% above, see test_baselines); tolerance 3 binomial sd,
    # sqrt(.02*.98/4000) = 0.0022, for the sampling and the flexibility of a 7-parameter curve
    m = ISplineQuantileRegressor(tau=0.98, kappa=1000.0, lam=1e-4, rng=np.random.default_rng(0)).fit(z, y)
    q = m.predict(z)
    assert np.mean(y > q) == pytest.approx(0.02, abs=0.0066)
    p = m.params_
    assert min(p["w"]) >= 0 and p["y0"] >= 0 and p["L"] >= 0 and p["y0"] + p["L"] <= 1 + 1e-12
    assert np.all(np.diff(m.predict(np.linspace(-1, 4, 200))) >= -1e-12)  # monotone boundary
    assert m.converged_


@pytest.mark.parametrize("degree", [2, 3])
def test_predict_is_the_model_on_its_basis(degree):
    # predict sums the B-splines with the weights' partial sums: the same curve as a0 + I(z) w, to rounding
    rng = np.random.default_rng(degree)
    w = rng.uniform(0.0, 3.0, BP.size - 2 + degree)
    w[1] = 0.0  # a weight at its bound
    m = ISplineQuantileRegressor(tau=0.9, kappa=50.0, lam=1e-4, degree=degree)
    m.params_ = {"y0": 0.1, "L": 0.7, "a0": -2.0, "w": list(w), "breakpoints": list(BP), "degree": degree}
    want = 0.1 + 0.7 / (1.0 + np.exp(2.0 - ispline_basis(X, BP, degree) @ w))
    assert np.max(np.abs(m.predict(X) - want)) < 1e-14
    assert m.predict(2.0).shape == (1,)


def test_fit_is_reproducible_and_needs_rng():
    rng = np.random.default_rng(6)
    z = rng.uniform(0, 3, 300)
    y = np.clip(0.2 + 0.1 * z + rng.normal(0, 0.05, 300), 0, 1)
    a = ISplineQuantileRegressor(tau=0.98, kappa=50.0, lam=1e-4, rng=np.random.default_rng(1)).fit(z, y)
    b = ISplineQuantileRegressor(tau=0.98, kappa=50.0, lam=1e-4, rng=np.random.default_rng(1)).fit(z, y)
    assert a.params_ == b.params_
    with pytest.raises(ValueError, match="rng"):
        ISplineQuantileRegressor(tau=0.98, kappa=50.0, lam=1e-4, n_random=2).fit(z, y)
    # without random starts no rng is needed
    ISplineQuantileRegressor(tau=0.98, kappa=50.0, lam=1e-4, n_random=0).fit(z, y)


def _natural(lam=1e-3, seed=0, tau=0.9, ties=False):
    z, y, rng = _data(seed, ties)
    if ties:
        return _Natural.of(z, y, BP, 3, tau, 50.0, lam), z, y, rng
    return _Natural(ispline_basis(z, BP), y, tau, 50.0, lam), z, y, rng


@pytest.mark.parametrize("ties", [False, True], ids=["points", "distinct-z"])
def test_natural_gradient_and_hessian_match_central_differences(ties):
    nat, z, y, rng = _natural(ties=ties)
    assert (nat.D.shape[0] == 40) == ties  # with z given, one row of D per distinct z
    for _ in range(5):
        p = nat.D.shape[1] - 1
        x = np.r_[rng.uniform(0.0, 0.3), rng.uniform(0.6, 1.0), rng.normal(-1.0, 1.0), rng.uniform(0.0, 2.0, p)]
        f, der = nat(x)
        g, H = der()
        eye, h = np.eye(x.size), 1e-6
        g_fd = np.array([(nat(x + h * e)[0] - nat(x - h * e)[0]) / (2 * h) for e in eye])
        H_fd = np.array([(nat(x + h * e)[1]()[0] - nat(x - h * e)[1]()[0]) / (2 * h) for e in eye])
        # central differences: error of order h**2 times the third derivative; relative to the sizes
        assert np.allclose(g, g_fd, atol=1e-8 * np.abs(g).max())
        assert np.allclose(H, H_fd, atol=1e-6 * np.abs(H).max())
        np.testing.assert_array_equal(H, H.T)
        y0, L, a0, w = nat.natural(x)
        assert f == pytest.approx(ispline_objective((y0, L, a0, w), z, y, BP, tau=0.9, kappa=50.0, lam=1e-3), rel=1e-12)


def test_grouping_the_points_by_z_changes_nothing_but_rounding():
    z, y, rng = _data(ties=True)
    rows = _Natural(ispline_basis(z, BP), y, 0.9, 50.0, 1e-3)
    grouped = _Natural.of(z, y, BP, 3, 0.9, 50.0, 1e-3)
    assert rows.D.shape[0] == 200 and grouped.D.shape[0] == 40
    x = np.r_[0.1, 0.9, -1.0, rng.uniform(0.0, 2.0, rows.D.shape[1] - 1)]
    (f1, d1), (f2, d2) = rows(x), grouped(x)
    assert f1 == pytest.approx(f2, rel=1e-14)
    for a, b in zip(d1(), d2()):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


def test_fit_ends_at_a_kkt_point_with_weights_reaching_zero_exactly():
    rng = np.random.default_rng(7)
    z = rng.uniform(0, 3, 600)
    # flat below z = 2: the weights of the left intervals have nothing to carry
    y = np.clip(0.2 + 0.4 * (z > 2.0) * (z - 2.0) + rng.normal(0, 0.03, z.size), 0, 1)
    m = ISplineQuantileRegressor(tau=0.98, kappa=50.0, lam=1e-4, rng=np.random.default_rng(0)).fit(z, y)
    assert m.converged_ and 0.0 in m.params_["w"]
    nat = _Natural(ispline_basis(z, m.params_["breakpoints"]), y, 0.98, 50.0, 1e-4)
    x = nat.from_natural(m.params_)
    g = nat(x)[1]()[0]
    w = np.asarray(m.params_["w"])
    free = np.r_[x[0] > 0, x[1] < 1, True, w > 0]
    assert np.abs(g[free]).max() < 1e-9  # stationary in the free coordinates
    assert np.all(g[3:][w == 0] >= 0)  # a zero weight could only raise J by growing


def test_warm_start_reaches_the_full_fits_optimum():
    rng = np.random.default_rng(8)
    z = rng.uniform(0, 3, 800)
    y = np.clip(0.15 + 0.5 / (1 + np.exp(-2 * (z - 1.5))) + rng.normal(0, 0.05, z.size), 0, 1)
    full = ISplineQuantileRegressor(tau=0.98, kappa=50.0, lam=1e-4, rng=np.random.default_rng(0)).fit(z, y)
    idx = rng.integers(0, z.size, z.size)
    warm = ISplineQuantileRegressor(tau=0.98, kappa=50.0, lam=1e-4).fit(z[idx], y[idx], init=full.params_)
    cold = ISplineQuantileRegressor(tau=0.98, kappa=50.0, lam=1e-4, rng=np.random.default_rng(1)).fit(z[idx], y[idx])
    assert warm.converged_ and warm.n_iter_ < 20
    assert warm.objective_ == pytest.approx(cold.objective_, rel=1e-12)
    assert np.allclose(warm.predict(X), cold.predict(X), atol=1e-6)


def _tied_data_and_a_fit_with_more_knots(seed):
    """``(z, y, init, rng)``: heavy ties in ``z``, and ``init`` a 4-interval fit to spread-out data, whose
    breakpoints give more basis functions than this data's quantile breakpoints (they collapse)."""
    rng = np.random.default_rng(seed)
    z = np.r_[np.zeros(400), np.repeat([1.0, 1.5, 2.0, 3.0], 120)]
    y = np.clip(0.1 + 0.2 * z + rng.normal(0, 0.05, z.size), 0, 1)
    spread = rng.uniform(0, 3, z.size)
    init = ISplineQuantileRegressor(tau=0.98, kappa=50.0, lam=1e-4, n_intervals=4, rng=np.random.default_rng(0))
    init = init.fit(spread, np.clip(0.1 + 0.2 * spread + rng.normal(0, 0.05, z.size), 0, 1)).params_
    return z, y, init, rng


def test_warm_start_from_a_fit_with_other_knots():
    z, y, init, _ = _tied_data_and_a_fit_with_more_knots(9)
    assert len(quantile_breakpoints(z, 4)) < len(init["breakpoints"])
    warm = ISplineQuantileRegressor(tau=0.98, kappa=50.0, lam=1e-4, n_intervals=4).fit(z, y, init=init)
    cold = ISplineQuantileRegressor(tau=0.98, kappa=50.0, lam=1e-4, n_intervals=4, rng=np.random.default_rng(1))
    cold = cold.fit(z, y)
    assert warm.converged_ and len(warm.params_["w"]) == len(cold.params_["w"])
    assert warm.objective_ == pytest.approx(cold.objective_, rel=1e-10)


def test_a_start_from_a_fit_with_other_knots_does_not_depend_on_the_order_of_the_points():
    # the problem keeps its points in increasing z (grouped by value); the fit's eta, taken at the
    # points as given, must be matched in that order
    z, y, init, rng = _tied_data_and_a_fit_with_more_knots(10)
    bp = quantile_breakpoints(z, 4)
    perm = rng.permutation(z.size)
    in_order = _Natural.of(z, y, bp, 3, 0.98, 50.0, 1e-4)
    shuffled = _Natural.of(z[perm], y[perm], bp, 3, 0.98, 50.0, 1e-4)
    assert shuffled.ties.sizes is not None  # grouped: five distinct values
    np.testing.assert_allclose(shuffled.from_fit(init, z[perm]), in_order.from_fit(init, z), atol=1e-9)


@pytest.mark.parametrize("degree", [2, 3])
def test_basis_uses_the_values_of_the_design_matrix(degree):
    # the B-splines evaluated as a spline with identity coefficients: bit for bit scipy's design matrix
    from scipy.interpolate import BSpline

    from harness.stats.ispline import clamped_knot_vector

    rng = np.random.default_rng(12)
    for n_intervals in (1, 2, 3, 6):
        z = np.repeat(rng.uniform(-0.5, 3.0, 60), 3)
        bp = quantile_breakpoints(z, n_intervals)
        t = clamped_knot_vector(bp, degree)
        B = BSpline.design_matrix(np.clip(z, bp[0], bp[-1]), t, degree).toarray()
        np.testing.assert_array_equal(ispline_basis(z, bp, degree), np.cumsum(B[:, ::-1], axis=1)[:, ::-1][:, 1:])


@pytest.mark.parametrize("kappa", [50.0, 1000.0], ids=["separable", "per-point"])
def test_problems_stacked_give_each_ones_value_and_derivatives(kappa):
    # the values of several y on one z computed together equal each problem's own, to rounding
    z, y, rng = _data(ties=True)
    ys = [np.clip(y + rng.normal(0.0, 0.05, y.size), 0, 1) for _ in range(4)]
    problems = [_Natural.of(z, v, BP, 3, 0.9, kappa, 1e-3) for v in ys]
    points = LossPoints(np.stack([p.points.y for p in problems]), 0.9, kappa, problems[0].ties)
    p = problems[0].D.shape[1] - 1
    xs = [np.r_[rng.uniform(0.0, 0.3), rng.uniform(0.6, 1.0), rng.normal(-1.0, 1.0), rng.uniform(0.0, 2.0, p)]]
    xs += [xs[0] + rng.normal(0.0, 0.05, xs[0].size) for _ in range(2)]
    ks = [0, 2, 3]  # some of the stack
    assert_stack_matches(problems, points, ks, xs)


def test_fits_together_equal_the_fits_one_at_a_time():
    rng = np.random.default_rng(11)
    z = np.round(rng.uniform(0, 3, 500), 2)  # ties, as a leaderboard's z
    ys = [np.clip(0.15 + c / (1 + np.exp(-2 * (z - 1.5))) + rng.normal(0, 0.05, z.size), 0, 1) for c in (0.3, 0.5, 0.6)]
    full = ISplineQuantileRegressor(tau=0.98, kappa=50.0, lam=1e-4, rng=np.random.default_rng(0)).fit(z, ys[0])
    # resampled rows; the second start comes from a fit with other knots (another basis size)
    idx = rng.integers(0, z.size, z.size)
    _, _, other, _ = _tied_data_and_a_fit_with_more_knots(12)
    inits = [full.params_, other, full.params_]
    settings = {"tau": 0.98, "kappa": 50.0, "lam": 1e-4}
    together = fit_together([ISplineQuantileRegressor(**settings) for _ in ys], z[idx], [y[idx] for y in ys], inits)
    for m, y, init in zip(together, ys, inits):
        alone = ISplineQuantileRegressor(**settings).fit(z[idx], y[idx], init=init)
        assert m.converged_ and m.n_iter_ == alone.n_iter_
        assert m.objective_ == pytest.approx(alone.objective_, rel=1e-13)
        assert m.params_["breakpoints"] == alone.params_["breakpoints"]
        np.testing.assert_allclose(m.predict(X), alone.predict(X), rtol=1e-9, atol=1e-12)
