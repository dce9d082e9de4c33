"""I-spline basis and the monotone I-spline quantile estimator."""

import numpy as np
import pytest
from scipy.optimize import approx_fprime

from harness.stats.ispline import (
    ISplineQuantileRegressor,
    _Problem,
    ispline_basis,
    ispline_basis_derivative,
    ispline_objective,
    quantile_breakpoints,
)

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


def _problem(lam=1e-4, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.uniform(-0.5, 3.0, 200)
    y = np.clip(0.1 + 0.2 * z + rng.normal(0, 0.05, 200), 0, 1)
    return _Problem(ispline_basis(z, BP), y, 0.98, 50.0, lam), z, y, rng


def test_objective_gradient_matches_finite_differences():
    prob, z, y, rng = _problem(lam=1e-2)
    for _ in range(5):
        theta = rng.normal(0, 1.5, 3 + prob.basis.shape[1])
        f, g = prob.value_and_grad(theta)
        fd = approx_fprime(theta, lambda t: prob.value_and_grad(t)[0], 1e-7)
        # forward differences: error O(h * f'') ~ 1e-7 * kappa; compare relative to the gradient size
        assert np.allclose(g, fd, atol=1e-6 + 1e-4 * np.abs(g).max())
        # the value is the documented objective at the natural parameters
        y0, L, a0, w = prob.natural(theta)
        assert f == pytest.approx(
            ispline_objective((y0, L, a0, w), z, y, BP, tau=0.98, kappa=50.0, lam=1e-2), rel=1e-12
        )


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
