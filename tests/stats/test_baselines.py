"""Constant, loss-minimising constant and Binwise baselines."""

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from harness.stats.baselines import (
    BinwiseQuantileRegressor,
    ConstantQuantileRegressor,
    LossMinimisingConstantRegressor,
    smoothed_pinball_constant,
)
from harness.stats.pinball import smoothed_pinball_loss

pytestmark = pytest.mark.filterwarnings("error")


def test_constant_is_numpy_linear_quantile():
    # y = 0, 0.01, ..., 1.00 (101 points): the 0.98 quantile sits exactly on the 99th value, 0.98
    y = np.linspace(0.0, 1.0, 101)
    m = ConstantQuantileRegressor(tau=0.98).fit(np.zeros_like(y), y)
    assert m.params_["c"] == pytest.approx(0.98, abs=1e-15)
    assert np.all(m.predict([-5.0, 0.0, 5.0]) == m.params_["c"])


def test_loss_minimising_constant_closed_form():
    # all y equal: the condition sigmoid(kappa (y - c)) = 1 - tau gives c = y + logit(tau) / kappa
    c = smoothed_pinball_constant(np.full(7, 0.5), 0.98, 50.0)
    assert c == pytest.approx(0.5 + np.log(0.98 / 0.02) / 50.0, abs=1e-12)


def test_loss_minimising_constant_matches_a_second_optimiser():
    rng = np.random.default_rng(1)
    y = np.clip(rng.normal(0.4, 0.1, 300), 0, 1)
    c = smoothed_pinball_constant(y, 0.98, 50.0)
    ref = minimize_scalar(
        lambda v: np.mean(smoothed_pinball_loss(y - v, 0.98, 50.0)),
        bounds=(0.0, 1.0),
        method="bounded",
        options={"xatol": 1e-12},
    )
    # the objective is convex in c, so both find the same minimiser (bounded Brent to ~1e-8)
    assert c == pytest.approx(ref.x, abs=1e-7)
    m = LossMinimisingConstantRegressor(tau=0.98, kappa=50.0).fit(np.zeros_like(y), y)
    assert m.objective_ == pytest.approx(np.mean(smoothed_pinball_loss(y - c, 0.98, 50.0)), rel=1e-12)


def test_loss_minimising_constant_respects_the_box():
    # all y = 1: the unconstrained minimiser is 1 + logit(0.98)/50 > 1, so the bound 1 is returned
    assert smoothed_pinball_constant(np.ones(5), 0.98, 50.0) == 1.0
    # all y = 0 at tau = 0.02: the unconstrained minimiser is logit(0.02)/50 < 0, so 0 is returned
    assert smoothed_pinball_constant(np.zeros(5), 0.02, 50.0) == 0.0


def test_loss_minimiser_leaves_about_one_minus_tau_above():
    rng = np.random.default_rng(2)
    y = rng.normal(0.5, 0.1, 20000)
    # sharp limit (kappa = 2000, smoothing scale 5e-4 << sd 0.1): about 2% above;
    # binomial sd sqrt(.02*.98/20000) = 0.001, tolerance 4 sd
    assert np.mean(y > smoothed_pinball_constant(y, 0.98, 2000.0)) == pytest.approx(0.02, abs=0.004)
    # kappa = 50: the optimum solves mean(sigmoid(kappa (y - c))) = 1 - tau, i.e. c is the 0.98-quantile
    # of y + e with e ~ Logistic(0, 1/50) (sd 0.036); y + e has sd 0.1064, so c ~ 0.5 + 2.054 * 0.1064
    # and P(y > c) = P(Z > 2.185) ~ 0.0144: the smoothed fit leaves fewer than 2% above
    c = smoothed_pinball_constant(y, 0.98, 50.0)
    assert np.mean(1 / (1 + np.exp(-50.0 * (y - c)))) == pytest.approx(0.02, abs=1e-10)
    assert np.mean(y > c) == pytest.approx(0.0144, abs=0.003)


def test_binwise_levels_and_prediction_rule():
    # two groups of 30 at z = 0..2 and z = 10..12 with different score levels
    rng = np.random.default_rng(3)
    z = np.r_[np.repeat([0.0, 1.0, 2.0], 10), np.repeat([10.0, 11.0, 12.0], 10)]
    y = np.r_[rng.uniform(0.1, 0.2, 30), rng.uniform(0.6, 0.7, 30)]
    # N = 60, K = 2 -> target 30, reached at the group z = 2.
    # "next": 2 is an edge, bins [0, 2) (20 points) and [2, 12] (40 points).
    nxt = BinwiseQuantileRegressor(tau=0.98, kappa=50.0, n_bins=2, min_bin_size=10).fit(z, y)
    assert nxt.params_["counts"] == [20, 40] and nxt.params_["left_edges"] == [0.0, 2.0]
    # "same": the z = 2 group closes the first bin, bins {0, 1, 2} and {10, 11, 12}
    m = BinwiseQuantileRegressor(tau=0.98, kappa=50.0, n_bins=2, min_bin_size=30, closing_group="same").fit(z, y)
    assert m.params_["counts"] == [30, 30]
    assert m.params_["left_edges"] == [0.0, 10.0]
    # each level is the loss-minimising constant of its bin
    assert m.params_["levels"][0] == pytest.approx(smoothed_pinball_constant(y[:30], 0.98, 50.0), abs=1e-12)
    assert m.params_["levels"][1] == pytest.approx(smoothed_pinball_constant(y[30:], 0.98, 50.0), abs=1e-12)
    lo, hi = m.params_["levels"]
    # below the range -> first bin; the gap (2, 10) -> lower bin; 10 and above -> upper bin
    assert m.predict([-1.0, 5.0, 9.99, 10.0, 50.0]).tolist() == [lo, lo, lo, hi, hi]


def test_binwise_never_worse_in_sample_than_one_constant():
    # one bin's optimum is a feasible choice in every bin, so per-bin optima cannot do worse in-sample
    rng = np.random.default_rng(4)
    z = rng.uniform(0, 3, 400)
    y = np.clip(0.2 + 0.15 * z + rng.normal(0, 0.05, 400), 0, 1)
    bw = BinwiseQuantileRegressor(tau=0.98, kappa=50.0).fit(z, y)
    lm = LossMinimisingConstantRegressor(tau=0.98, kappa=50.0).fit(z, y)
    loss = lambda q: np.mean(smoothed_pinball_loss(y - q, 0.98, 50.0))
    assert loss(bw.predict(z)) <= loss(lm.predict(z)) + 1e-15
