"""The smoothed pinball loss against hand-worked values and its own definition."""

import numpy as np
import pytest

from harness.stats._ties import Ties
from harness.stats.pinball import (
    LossPoints,
    check_loss,
    literal_smoothed_pinball_loss,
    smoothed_pinball_derivative,
    smoothed_pinball_loss,
    sum_of_logs,
)


def test_value_at_zero_is_log2_over_kappa():
    # rho(0) = log(1 + e^0)/kappa + 0 = log(2)/kappa, whatever tau is.
    for tau in (0.1, 0.5, 0.98):
        assert smoothed_pinball_loss(0.0, tau, 50.0) == pytest.approx(np.log(2) / 50.0, rel=1e-15)


def test_tails_approach_the_check_loss():
    # For kappa*u >> 1, log(1+e^{ku})/k -> u, so rho -> u + (tau-1)u = tau*u;
    # for kappa*u << -1 it -> (tau-1)*u. Residual gap is log1p(e^{-k|u|})/k.
    u = np.array([-2.0, 2.0])
    got = smoothed_pinball_loss(u, 0.98, 50.0)
    np.testing.assert_allclose(got, check_loss(u, 0.98), atol=np.log1p(np.exp(-100)) / 50 + 1e-15)


def test_matches_literal_formula_where_it_does_not_overflow():
    u = np.linspace(-1, 1, 2001)
    np.testing.assert_allclose(
        smoothed_pinball_loss(u, 0.98, 50.0), literal_smoothed_pinball_loss(u, 0.98, 50.0), rtol=0, atol=1e-15
    )


def test_stable_where_literal_overflows():
    # kappa*u = 5e4: the literal exp overflows to inf; the stable form gives tau*u to rounding.
    assert not np.isfinite(literal_smoothed_pinball_loss(1000.0, 0.98, 50.0))
    assert smoothed_pinball_loss(1000.0, 0.98, 50.0) == pytest.approx(980.0, rel=1e-15)


def test_sup_gap_to_check_loss_is_log2_over_kappa():
    u = np.linspace(-0.5, 0.5, 100001)
    for kappa in (10.0, 50.0, 1000.0):
        gap = np.max(smoothed_pinball_loss(u, 0.98, kappa) - check_loss(u, 0.98))
        assert gap == pytest.approx(np.log(2) / kappa, rel=1e-9)


def test_derivative_matches_finite_differences():
    u = np.linspace(-0.2, 0.2, 41)
    h = 1e-6
    fd = (smoothed_pinball_loss(u + h, 0.9, 25.0) - smoothed_pinball_loss(u - h, 0.9, 25.0)) / (2 * h)
    np.testing.assert_allclose(smoothed_pinball_derivative(u, 0.9, 25.0), fd, atol=1e-8)


def test_sum_of_logs_is_the_sum_of_log1p_to_rounding():
    # exp(-x) from 1 down to 1e-35: the products of runs of 1000 factors stay finite, and a factor 1 + e
    # that rounds e away (below 2**-53) loses no more than log1p would keep
    e = np.exp(-np.linspace(0.0, 80.0, 3663))
    exact = np.sum(np.log1p(e), dtype=np.longdouble)
    assert abs(float(sum_of_logs(1.0 + e)) - float(exact)) <= 3663 * 2.0**-53
    rows = np.stack([e, e[::-1], np.full(3663, 1.0)])
    np.testing.assert_allclose(sum_of_logs(1.0 + rows), np.log1p(rows).sum(axis=1), rtol=1e-14)


@pytest.mark.parametrize("grouped", [False, True], ids=["per-point", "per-distinct-z"])
@pytest.mark.parametrize("weighted", ["mean", "counts", "real"])
def test_loss_points_give_the_loss_and_its_derivatives(weighted, grouped):
    # q = y0 + L s on 600 points in 40 groups of 15 that share s (a compute value shared by fine-tunes):
    # per distinct z the loss takes exp(-kappa |y - q|) as a product of per-point and per-group factors
    rng = np.random.default_rng(0)
    s40 = rng.uniform(0.0, 1.0, 40)
    s = np.repeat(s40, 15)
    y = np.clip(0.2 + 0.6 * s + rng.normal(0.0, 0.1, s.size), 0.0, 1.0)
    y0, L = 0.1, 0.75
    w = {"mean": np.ones(s.size), "counts": rng.integers(1, 4, s.size), "real": rng.uniform(0.01, 3.0, s.size)}
    wn = w[weighted] / w[weighted].sum()
    ties = Ties.of(np.repeat(np.arange(40.0), 15)) if grouped else Ties.none()
    sums = (lambda v: v.reshape(40, 15).sum(axis=1)) if grouped else (lambda v: v)
    for tau, kappa in ((0.98, 50.0), (0.5, 10.0), (0.9, 1000.0)):
        points = LossPoints(y, tau, kappa, ties, None if weighted == "mean" else w[weighted])
        # the product form where every factor stays in range (kappa <= 300 here), the exponential of |x| beyond
        assert (points.factors is not None) == (grouped and kappa <= 300)
        u = y - (y0 + L * s)
        f, derivatives = points.at(y0, L, s40 if grouped else s)
        assert f == pytest.approx(wn @ smoothed_pinball_loss(u, tau, kappa), rel=1e-14)
        r1, r2 = derivatives()
        # dJ/dq = -rho'(u) w;  d2J/dq2 = rho''(u) w, rho'' = kappa sigmoid(kappa u) sigmoid(-kappa u). r1 sums
        # terms of either sign up to 15 * 0.05 / 600 in size per group: rounding errors to 1e-15 absolute
        sig = 1.0 / (1.0 + np.exp(-kappa * u))
        np.testing.assert_allclose(r1, sums(-smoothed_pinball_derivative(u, tau, kappa) * wn), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(r2, sums(kappa * sig * (1.0 - sig) * wn), rtol=1e-12, atol=1e-15)


def test_what_recent_shares_cannot_be_written_to():
    # the sorting, grouping and I-spline basis of a z are shared by every fit on it: a write would change them all
    from harness.stats.ispline import ISplineQuantileRegressor

    z = np.repeat(np.linspace(0.0, 1.0, 30), 3)[::-1].copy()
    y = np.random.default_rng(0).uniform(size=z.size)
    ISplineQuantileRegressor(tau=0.9, kappa=50.0, lam=1e-3, rng=np.random.default_rng(1)).fit(z, y)
    order, ties = Ties.sorted(z)
    for shared in (order, ties.values, ties.starts, ties.sizes):
        with pytest.raises(ValueError, match="read-only"):
            shared[0] = 0
    assert Ties.sorted(z)[0] is order and z.flags.writeable  # remembered; the caller's own array untouched
