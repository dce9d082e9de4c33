"""The smoothed pinball loss against hand-worked values and its own definition."""

import numpy as np
import pytest

from harness.stats.pinball import (
    check_loss,
    literal_smoothed_pinball_loss,
    smoothed_pinball_derivative,
    smoothed_pinball_loss,
    smoothed_pinball_loss_and_derivative,
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


def test_fused_loss_and_derivative_equal_the_separate_ones():
    u = np.concatenate([np.linspace(-2, 2, 4001), [-1e3, 1e3, 0.0]])
    for tau, kappa in ((0.98, 50.0), (0.5, 10.0), (0.9, 1000.0)):
        loss, d = smoothed_pinball_loss_and_derivative(u, tau, kappa)
        np.testing.assert_allclose(loss, smoothed_pinball_loss(u, tau, kappa), rtol=1e-14, atol=1e-16)
        np.testing.assert_allclose(d, smoothed_pinball_derivative(u, tau, kappa), rtol=1e-14, atol=1e-16)
