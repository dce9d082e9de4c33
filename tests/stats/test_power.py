"""Measured power of the stratified permutation shift test, against what it must be."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from harness.stats.power import (
    modified_residuals,
    permutation_test_power,
    residual_bootstrap_errors,
    shift_at_power,
    shift_test_power,
)
from harness.stats.shift import (
    group_shift_batch,
    group_shift_grid,
    merge_aa_exports,
    permutation_count_ge,
    permutation_p_value,
    shift_test,
    stratified_permutation_indices,
    stratum_labels,
)

pytestmark = pytest.mark.filterwarnings("error")

ALPHA = 0.05

#: Claim 000's design (claims/000_aime2025_shift_test.yaml): the clip and the strata of the test.
EPS, N_BINS = 1e-6, 10


def _design(n=90, seed=0):
    """A fixed design: x standard normal, labels independent of x (60% post)."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=n), (rng.random(n) < 0.6).astype(float)


def _t_test_power(c, x, d, sigma, alpha=ALPHA):
    """Power of the one-sided t-test of gamma > 0 in y = a + b x + gamma d + N(0, sigma^2).

    t = gamma_hat / se is noncentral t with n - 3 df and noncentrality
    c / (sigma * sqrt([(A'A)^{-1}]_dd)) = c sqrt(d'Md) / sigma.
    """
    A = np.column_stack([np.ones_like(x), x, d])
    nc = c / (sigma * math.sqrt(np.linalg.inv(A.T @ A)[2, 2]))
    df = x.size - 3
    return float(stats.nct.sf(stats.t.ppf(1 - alpha, df), df, nc))


# -- the batched pieces added to shift.py -----------------------------------------------


def test_grid_of_responses_equals_one_batch_per_response():
    x, d = _design()
    Y = np.random.default_rng(1).normal(size=(4, x.size)) + np.outer([0, 0.5, 1, 2], d)
    D = d[stratified_permutation_indices(stratum_labels(x, 5), 200, np.random.default_rng(2))]
    grid = group_shift_grid(x, Y, D)
    assert grid.shape == (4, 200)
    for k in range(4):
        np.testing.assert_allclose(grid[k], group_shift_batch(x, Y[k], D), rtol=1e-10, atol=1e-12)


def test_count_and_p_value_follow_the_shift_test_rule():
    # 3 of 5 permuted values are >= 1.0 (one of them a tie up to rounding): p = (1 + 3) / 6.
    g = np.array([0.5, 1.0 - 1e-13, 2.0, 1.5, np.nan])
    assert int(permutation_count_ge(g, 1.0)) == 3
    assert permutation_p_value(3, 5) == pytest.approx(4 / 6)
    # Vectorised over responses: row k compared with its own reference.
    G = np.vstack([g, g])
    assert permutation_count_ge(G, np.array([1.0, 1.75])).tolist() == [3, 1]


# -- residuals and errors -------------------------------------------------------------


def test_modified_residuals_use_the_leverage():
    x, d = _design(n=30)
    A = np.column_stack([np.ones_like(x), x, d])
    y = np.random.default_rng(3).normal(size=30)
    H = A @ np.linalg.inv(A.T @ A) @ A.T  # the hat matrix, the plain way
    r = y - H @ y
    m = r / np.sqrt(1 - np.diag(H))
    np.testing.assert_allclose(modified_residuals(A, y), m - m.mean(), rtol=1e-10, atol=1e-12)


def test_residual_bootstrap_draws_from_the_residuals_with_replacement():
    r = np.array([-2.0, 0.0, 5.0])
    E = residual_bootstrap_errors(r, 400, np.random.default_rng(0))
    assert E.shape == (400, 3) and set(np.unique(E)) == {-2.0, 0.0, 5.0}
    assert any(np.unique(row).size < 3 for row in E)  # with replacement: repeats occur


# -- power against the analytic t-test ---------------------------------------------------


@pytest.fixture(scope="module")
def normal_power():
    x, d = _design()
    sigma, R = 1.0, 1000
    errors = np.random.default_rng(10).normal(scale=sigma, size=(R, x.size))
    shifts = [0.0, 0.2, 0.4, 0.6]
    res = permutation_test_power(
        x, d, np.zeros(x.size, dtype=int), errors, shifts, rng=np.random.default_rng(11), n_perm=500, alpha=ALPHA
    )
    return x, d, sigma, res


def test_measured_power_matches_the_t_test_within_monte_carlo_error(normal_power):
    # One stratum, labels independent of x, normal errors: the permutation test of gamma is
    # asymptotically the one-sided t-test, whose power is a noncentral-t tail.
    x, d, sigma, res = normal_power
    for c, p in zip(res["shifts"], res["power"]):
        expected = _t_test_power(c, x, d, sigma)
        # Monte Carlo s.e. at the expected value (the measured one is 0 at power 0 or 1).
        tol = 3.5 * math.sqrt(expected * (1 - expected) / res["n_replicates"])
        assert abs(p - expected) < tol, (c, p, expected)
    # The grid spans a useful range: from the size to high power.
    assert _t_test_power(0.6, x, d, sigma) > 0.85


def test_power_at_zero_is_the_size(normal_power):
    *_, res = normal_power
    assert res["shifts"][0] == 0.0
    assert abs(res["power"][0] - ALPHA) < 3.5 * math.sqrt(ALPHA * (1 - ALPHA) / res["n_replicates"])


def test_power_increases_with_the_shift(normal_power):
    *_, res = normal_power
    assert all(b > a for a, b in zip(res["power"], res["power"][1:]))
    assert res["mc_se"][1] == pytest.approx(math.sqrt(res["power"][1] * (1 - res["power"][1]) / 1000))


def test_gamma_rises_by_the_planted_shift_by_algebra(normal_power):
    # OLS is linear in y and every shift reuses the replicate's errors: the mean gamma_hat
    # moves by exactly c. (True whatever the test's power; detection is what is measured.)
    *_, res = normal_power
    rise = np.array(res["mean_gamma"]) - res["mean_gamma"][0]
    np.testing.assert_allclose(rise, res["shifts"], atol=1e-10)


def test_a_baseline_in_the_span_of_one_and_x_changes_nothing():
    x, d = _design()
    errors = np.random.default_rng(0).normal(size=(50, x.size))
    strata = stratum_labels(x, 10)
    a = permutation_test_power(x, d, strata, errors, [0.0, 0.4], rng=np.random.default_rng(1), n_perm=300)
    b = permutation_test_power(
        x, d, strata, errors, [0.0, 0.4], rng=np.random.default_rng(1), n_perm=300, baseline=3.0 - 2.0 * x
    )
    assert a["n_detected"] == b["n_detected"]
    np.testing.assert_allclose(a["mean_gamma"], b["mean_gamma"], atol=1e-10)


def test_same_seeds_same_curve_and_different_permutations_differ():
    x, d = _design()
    errors = np.random.default_rng(0).normal(size=(60, x.size))
    strata = stratum_labels(x, 10)

    def run(seed):
        return permutation_test_power(
            x, d, strata, errors, [0.0, 0.3, 0.6], rng=np.random.default_rng(seed), n_perm=200
        )

    assert run(5) == run(5)
    assert run(5)["mean_null_centre"] != run(6)["mean_null_centre"]


def _pct(v):
    """Percent scores whose clipped logit is ``v`` (no clipping at these sizes)."""
    return 100.0 / (1.0 + np.exp(-np.asarray(v)))


def test_planted_shift_power_matches_a_loop_of_shift_tests():
    # The batched replicates equal shift_test run on each simulated data set, shift by
    # shift, with the same permutations. Both groups hold the smallest and the largest x,
    # so shift_test's common support keeps every point and its strata are these.
    x, d = _design(n=40)
    x[:2], d[:2] = x.min() - 1.0, [0.0, 1.0]
    x[2:4], d[2:4] = x.max() + 1.0, [0.0, 1.0]
    strata = stratum_labels(x, 4)
    errors = np.random.default_rng(0).normal(size=(12, x.size))
    shifts = [0.0, 0.5, 1.0]
    res = permutation_test_power(x, d, strata, errors, shifts, rng=np.random.default_rng(3), n_perm=99)
    rng = np.random.default_rng(3)
    detected = np.zeros(3, dtype=int)
    for e in errors:
        state = rng.bit_generator.state
        for k, c in enumerate(shifts):
            rng.bit_generator.state = state  # the same permutations at every shift
            out = shift_test(_pct(x), _pct(c * d + e), d.astype(bool), rng=rng, n_bins=4, n_perm=99, eps=EPS)
            assert out["n"] == x.size
            detected[k] += out["p_value"] < ALPHA
    assert res["n_detected"] == detected.tolist()
    assert detected[-1] > detected[0]  # the comparison is not vacuous


# -- the 80% shift -----------------------------------------------------------------------------


def test_shift_at_power_interpolates_between_the_bracketing_points():
    # First power >= 0.8 is 0.9 at c = 1.0; before it 0.5 at c = 0.5:
    # c* = 0.5 + (0.8 - 0.5) * (1.0 - 0.5) / (0.9 - 0.5) = 0.875.
    out = shift_at_power([0.0, 0.5, 1.0, 1.5], [0.05, 0.5, 0.9, 1.0], 0.8)
    assert out["shift"] == pytest.approx(0.875)
    assert out["bracket"] == [0.5, 1.0]
    assert (out["max_power"], out["shift_at_max_power"]) == (1.0, 1.5)


def test_shift_at_power_takes_the_first_crossing_and_sorts_the_grid():
    # Unsorted input; a Monte Carlo dip after the crossing does not matter:
    # crossing between c = 0 (0.05) and c = 0.5 (0.85): 0 + 0.75 * 0.5 / 0.8 = 0.46875.
    out = shift_at_power([1.0, 0.0, 0.5, 1.5], [0.7, 0.05, 0.85, 0.95], 0.8)
    assert out["shift"] == pytest.approx(0.46875)


def test_shift_at_power_when_the_grid_never_or_always_reaches_it():
    never = shift_at_power([0.0, 1.0, 2.0], [0.05, 0.4, 0.7])
    assert never["shift"] is None and never["bracket"] is None
    assert (never["max_power"], never["shift_at_max_power"]) == (0.7, 2.0)
    always = shift_at_power([0.5, 1.0], [0.9, 1.0])
    # Already reached at the first point: that point is an upper bound, not interpolated.
    assert always["shift"] == 0.5 and always["bracket"] is None


# -- the real design -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def merged(tables):
    return merge_aa_exports(tables.frame("aa_math500"), tables.frame("aa_aime2025"), cutoff="2025-02-06")


@pytest.mark.parametrize("mean_model", ["linear", "strata"])
def test_real_power_record(merged, mean_model):
    x, y, post = merged["math_500_pct"], merged["aime_2025_pct"], merged["post"]
    rec = shift_test_power(
        x,
        y,
        post,
        shifts=[0.0, 0.5, 1.0, 2.0],
        rng=np.random.default_rng(0),
        n_replicates=40,
        eps=1e-6,
        n_bins=10,
        n_perm=200,
        alpha=0.05,
        target=0.8,
        mean_model=mean_model,
    )
    test = shift_test(x, y, post, rng=np.random.default_rng(0), n_perm=10, eps=EPS, n_bins=N_BINS)
    # Same preparation as the test: the 90 supported models, the same gamma_hat.
    assert (rec["n"], rec["n_post"], rec["n_bins_used"]) == (test["n"], test["n_post"], test["n_bins_used"])
    assert rec["gamma_hat"] == pytest.approx(test["gamma"], abs=1e-12)
    if mean_model == "linear":
        assert rec["at_observed"]["shift"] == pytest.approx(test["gamma"], abs=1e-12)
    assert rec["curve"]["shifts"] == [0.0, 0.5, 1.0, 2.0] and rec["curve"]["n_replicates"] == 40
    json.dumps(rec, allow_nan=False)
