"""The loss checker, and this project's own smoothed pinball loss against its printed formula.

The checker (:func:`harness.stats.losscheck.check_loss_function`) is what claim 004 applies to the
authors' loss in their arm; here it is applied to this project's loss (tested here, not counted as a
claim target) and to perturbed functions, which it must reject.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.stats.losscheck import check_loss_function, printed_formula, residual_grid
from harness.stats.pinball import smoothed_pinball_loss

KAPPAS = (10.0, 25.0, 50.0, 200.0, 1000.0)


def test_grid_is_symmetric_and_contains_zero():
    g = residual_grid(1.0, 11)
    # The sup of the gap is at u = 0, so 0 must be a grid point.
    assert 0.0 in g and g[0] == -1.0 and g[-1] == 1.0
    with pytest.raises(ValueError, match="odd"):
        residual_grid(1.0, 10)


@pytest.mark.parametrize("kappa", KAPPAS)
@pytest.mark.parametrize("tau", (0.5, 0.98))
def test_our_loss_equals_the_printed_formula_and_sits_log2_over_kappa_above_the_check_loss(tau, kappa):
    res = check_loss_function(smoothed_pinball_loss, tau, kappa)
    # logaddexp(0, t) and log(1 + exp(t)) agree to a few ulps of values below ~20.
    assert res["literal_max_gap"] < 1e-14
    assert res["n_compared"] + res["n_skipped_overflow"] == residual_grid().size
    # rho - check = log(1 + exp(-kappa|u|))/kappa: largest at u = 0, equal to log(2)/kappa, whatever tau is.
    assert res["theory"] == pytest.approx(math.log(2) / kappa)
    assert res["sharp_rel_error"] < 1e-12 and res["argmax_u"] == 0.0
    assert res["sharp_min_gap"] > -1e-15  # an upper bound of the check loss, up to rounding


def test_overflow_region_of_the_printed_formula_is_skipped_and_counted():
    # At kappa = 1000 points with kappa*u > 700 are left out: the 30 000 grid points
    # (spacing 1e-5) in (0.7, 1], plus u = 0.7 itself when 1000 * 0.7 rounds above 700.
    res = check_loss_function(smoothed_pinball_loss, 0.98, 1000.0)
    assert res["n_skipped_overflow"] in (30_000, 30_001)
    assert math.isfinite(res["literal_max_gap"])


def test_gap_at_the_claimed_kappa():
    # Seed 004: at kappa = 50 the gap is 0.01386.
    assert check_loss_function(smoothed_pinball_loss, 0.98, 50.0)["sharp_sup_gap"] == pytest.approx(0.01386, abs=1e-5)


def test_the_check_fails_on_a_perturbed_loss():
    # Break-then-fix: the checks of claim 004 must be able to fail on code that is not the printed loss.
    def sum_instead_of_kappa(u, tau, kappa):  # a loss with another smoothing width
        return printed_formula(u, tau, kappa / 2)

    def shifted(u, tau, kappa):  # an additive constant: invisible to the optimiser, not the printed loss
        return smoothed_pinball_loss(u, tau, kappa) + 1e-6

    res = check_loss_function(sum_instead_of_kappa, 0.98, 50.0)
    assert res["literal_max_gap"] > 1e-3 and res["sharp_rel_error"] > 0.5
    res = check_loss_function(shifted, 0.98, 50.0)
    assert res["literal_max_gap"] > 1e-12 and res["sharp_rel_error"] > 1e-9


def test_a_grid_without_zero_underestimates_the_gap():
    # Off a grid without 0 the sup is smaller than log(2)/kappa, and the relative error shows it.
    res = check_loss_function(smoothed_pinball_loss, 0.98, 50.0, u=np.linspace(0.01, 1.0, 100))
    assert res["sharp_rel_error"] > 0.1
