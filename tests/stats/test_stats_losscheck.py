"""Claim 004, part 1: the smoothed pinball loss against its printed formula and the check loss."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.stats.losscheck import literal_formula_gap, residual_grid, sharp_loss_gap

pytestmark = pytest.mark.filterwarnings("error")

KAPPAS = (10.0, 25.0, 50.0, 200.0, 1000.0)


def test_grid_is_symmetric_and_contains_zero():
    g = residual_grid(1.0, 11)
    # The sup of the gap is at u = 0, so 0 must be a grid point.
    assert 0.0 in g and g[0] == -1.0 and g[-1] == 1.0
    with pytest.raises(ValueError, match="odd"):
        residual_grid(1.0, 10)


@pytest.mark.parametrize("kappa", KAPPAS)
@pytest.mark.parametrize("tau", (0.5, 0.98))
def test_stable_loss_equals_the_literal_formula(tau, kappa):
    res = literal_formula_gap(tau, kappa)
    # logaddexp(0, t) and log(1 + exp(t)) agree to a few ulps of values below ~20.
    assert res["max_abs_gap"] < 1e-14
    assert res["n_compared"] + res["n_skipped_overflow"] == residual_grid().size


def test_literal_formula_overflow_region_is_skipped_and_counted():
    # At kappa = 1000 points with kappa*u > 700 are left out: the 30 000 grid points
    # (spacing 1e-5) in (0.7, 1], plus u = 0.7 itself when 1000 * 0.7 rounds above 700.
    res = literal_formula_gap(0.98, 1000.0)
    assert res["n_skipped_overflow"] in (30_000, 30_001)
    assert math.isfinite(res["max_abs_gap"])


@pytest.mark.parametrize("kappa", KAPPAS)
@pytest.mark.parametrize("tau", (0.5, 0.98))
def test_sup_gap_to_check_loss_is_log2_over_kappa(tau, kappa):
    res = sharp_loss_gap(tau, kappa)
    # rho - check = log(1 + exp(-kappa|u|))/kappa: largest at u = 0, equal to log(2)/kappa,
    # whatever tau is.
    assert res["theory"] == pytest.approx(math.log(2) / kappa)
    assert res["rel_error"] < 1e-12
    assert res["argmax_u"] == 0.0
    # The smoothed loss is an upper bound of the check loss (up to rounding).
    assert res["min_gap"] > -1e-15


def test_gap_at_the_claimed_kappa():
    # Seed 004: at kappa = 50 the gap is 0.01386.
    assert sharp_loss_gap(0.98, 50.0)["sup_gap"] == pytest.approx(0.01386, abs=1e-5)


def test_a_grid_without_zero_underestimates_the_gap():
    # Break-then-fix: the check must be able to fail. Off a grid without 0 the
    # sup is smaller than log(2)/kappa, and the relative error shows it.
    res = sharp_loss_gap(0.98, 50.0, u=np.linspace(0.01, 1.0, 100))
    assert res["rel_error"] > 0.1
