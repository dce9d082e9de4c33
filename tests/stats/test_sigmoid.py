"""The sigmoid boundary estimator: gradients, toy fits with known answers, coverage."""

import numpy as np
import pytest
from scipy.optimize import minimize

from harness.stats.sigmoid import SigmoidQuantileRegressor, _Problem, sigmoid_boundary, sigmoid_objective


def _toy(n=3000, seed=1):
    rng = np.random.default_rng(seed)
    z = rng.uniform(-1, 4, n)
    # The truth: median curve 0.1 + 0.6*sigmoid(-2 + 1.2 z) plus uniform noise of half-width 0.05.
    y = sigmoid_boundary(z, 0.1, 0.6, -2.0, 1.2) + rng.uniform(-0.05, 0.05, n)
    return z, y


@pytest.mark.parametrize("boxed", [False, True], ids=["free", "authors-box"])
def test_gradient_matches_finite_differences(boxed):
    z, y = _toy(500)
    box = (float(z.min()), float(z.max())) if boxed else (None, None)
    prob = _Problem(z, y, float(z.mean()), 0.9, 25.0, 1e-2, *box)
    rng = np.random.default_rng(0)
    for _ in range(5):
        theta = rng.normal(size=4)
        _, g = prob.value_and_grad(theta)
        h = 1e-6
        fd = np.array([(prob.value_and_grad(theta + h * e)[0] - prob.value_and_grad(theta - h * e)[0]) / (2 * h)
                       for e in np.eye(4)])
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-9)


def test_box_keeps_midpoint_in_the_data_and_slope_in_its_limits():
    # Data whose unconstrained 0.98-boundary has its midpoint far beyond the largest z
    # (a straight rising envelope): the box must hold the midpoint at the edge.
    rng = np.random.default_rng(5)
    z = rng.uniform(0, 2, 2000)
    y = 0.05 + 0.1 * z + rng.uniform(0, 0.05, z.size)
    free = SigmoidQuantileRegressor(rng=np.random.default_rng(0)).fit(z, y)
    boxed = SigmoidQuantileRegressor(box=(0.05, 50.0), rng=np.random.default_rng(0)).fit(z, y)
    mid = lambda p: -p["a"] / p["beta"]  # noqa: E731
    assert mid(free.params_) > z.max()
    assert z.min() <= mid(boxed.params_) <= z.max() + 1e-9
    assert 0.05 - 1e-12 <= boxed.params_["beta"] <= 50.0 + 1e-9
    # A constrained optimum can only be worse on the same objective.
    assert boxed.objective_ >= free.objective_ - 1e-12


def test_objective_in_theta_equals_objective_in_natural_parameters():
    z, y = _toy(200)
    prob = _Problem(z, y, float(z.mean()), 0.98, 50.0, 1e-3)
    theta = np.array([-1.0, 0.5, 0.2, 0.1])
    assert prob.value_and_grad(theta)[0] == pytest.approx(
        sigmoid_objective(prob.natural(theta), z, y, tau=0.98, kappa=50.0, lam=1e-3), rel=1e-13)


def test_recovers_a_known_upper_quantile_curve():
    # With y = m(z) + U(-0.05, 0.05), the exact 0.98-quantile is m(z) + 0.046: the
    # same sigmoid shifted up, i.e. y0 + 0.046. Smoothing (kappa=200) and finite n blur
    # it by a few thousandths; no ridge so beta is not shrunk.
    z, y = _toy(4000)
    m = SigmoidQuantileRegressor(tau=0.98, kappa=200.0, lam=0.0, rng=np.random.default_rng(0)).fit(z, y)
    grid = np.linspace(-1, 4, 11)
    truth = sigmoid_boundary(grid, 0.146, 0.6, -2.0, 1.2)
    np.testing.assert_allclose(m.predict(grid), truth, atol=0.01)


@pytest.mark.parametrize("tau", [0.5, 0.9, 0.98])
def test_quantile_fit_leaves_about_one_minus_tau_above(tau):
    z, y = _toy(4000, seed=3)
    # kappa = 2000: the smoothing width 1/kappa is small against the noise width 0.1,
    # so the first-order condition mean(sigmoid(kappa*u)) = 1 - tau pins the share above.
    m = SigmoidQuantileRegressor(tau=tau, kappa=2000.0, lam=0.0, rng=np.random.default_rng(0)).fit(z, y)
    above = np.mean(y > m.predict(z))
    # Binomial sd at n=4000 is at most 0.008.
    assert above == pytest.approx(1 - tau, abs=0.02)


def test_constraints_hold_by_construction():
    z, y = _toy(1000)
    m = SigmoidQuantileRegressor(rng=np.random.default_rng(0)).fit(z, y)
    p = m.params_
    assert p["y0"] >= 0 and p["L"] >= 0 and p["y0"] + p["L"] <= 1 and p["beta"] >= 0


def test_a_second_optimiser_finds_no_lower_objective():
    # Nelder-Mead in the natural parameters, started at our optimum and at a
    # perturbed point, must not beat the L-BFGS-B fit by more than rounding.
    z, y = _toy(1500)
    kw = dict(tau=0.98, kappa=50.0, lam=1e-3)
    m = SigmoidQuantileRegressor(rng=np.random.default_rng(0), **kw).fit(z, y)
    ours = sigmoid_objective([m.params_[k] for k in ("y0", "L", "a", "beta")], z, y, **kw)

    def f(p):
        y0, L, a, beta = p
        if y0 < 0 or L < 0 or y0 + L > 1 or beta < 0:
            return np.inf
        return sigmoid_objective(p, z, y, **kw)

    for start in ([m.params_[k] for k in ("y0", "L", "a", "beta")], [0.05, 0.8, -1.0, 1.0]):
        res = minimize(f, start, method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 20000})
        assert res.fun >= ours - 1e-9


def test_same_generator_seed_gives_identical_fits():
    z, y = _toy(800)
    a = SigmoidQuantileRegressor(rng=np.random.default_rng(7)).fit(z, y).params_
    b = SigmoidQuantileRegressor(rng=np.random.default_rng(7)).fit(z, y).params_
    assert a == b


def test_random_starts_need_an_explicit_generator():
    z, y = _toy(100)
    with pytest.raises(ValueError, match="rng"):
        SigmoidQuantileRegressor(n_random=3).fit(z, y)


def test_rejects_bad_shapes():
    with pytest.raises(ValueError, match="equal length"):
        SigmoidQuantileRegressor(n_random=0).fit(np.zeros(5), np.zeros(4))
