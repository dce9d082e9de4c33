"""Claim 000: the AIME-2025 shift test (Equation 3) and its permutation p-value."""

from __future__ import annotations

import numpy as np
import pytest
from reference import approx, reference

from harness.stats.shift import (
    clipped_logit,
    common_support,
    eps_sensitivity,
    group_shift_batch,
    inflation_control,
    merge_aa_exports,
    ols_classical,
    relabel_control,
    shift_test,
    stratified_permutation_indices,
    stratum_labels,
)

pytestmark = pytest.mark.filterwarnings("error")

#: Claim 000's design (claims/000_aime2025_shift_test.yaml): the clip and the strata of the test.
EPS, N_BINS = 1e-6, 10


def _toy(n=60, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    d = (rng.random(n) < 0.4).astype(float)
    y = 0.3 + 1.2 * x + 0.7 * d + rng.normal(scale=0.5, size=n)
    return x, y, d


def _pct(v, scale=1.0):
    """Percent scores whose clipped logit is ``v / scale`` (no clipping at these sizes)."""
    return 100.0 / (1.0 + np.exp(-np.asarray(v) / scale))


def _loop_gammas(x, y, D):
    """gamma from a fresh least-squares fit for every label vector (the plain way)."""
    out = []
    for d in D:
        A = np.column_stack([np.ones_like(x), x, d])
        out.append(np.linalg.lstsq(A, y, rcond=None)[0][2])
    return np.array(out)


# -- OLS -----------------------------------------------------------------------


def test_ols_matches_statsmodels_on_toy_data():
    sm = pytest.importorskip("statsmodels.api")
    x, y, d = _toy()
    A = np.column_stack([np.ones_like(x), x, d])
    ours = ols_classical(A, y)
    ref = sm.OLS(y, A).fit()  # classical (nonrobust) covariance is statsmodels' default
    # Same estimator, same sigma^2 = RSS/(n-k): agreement to rounding.
    np.testing.assert_allclose(ours["coef"], ref.params, rtol=1e-10)
    np.testing.assert_allclose(ours["se"], ref.bse, rtol=1e-10)
    np.testing.assert_allclose(ours["t"], ref.tvalues, rtol=1e-10)
    assert ours["r2"] == pytest.approx(ref.rsquared, rel=1e-10)


def test_ols_exact_fit_on_hand_worked_case():
    # y = 1 + 2x exactly: the coefficients are recovered and the residuals vanish,
    # so R^2 = 1.
    x = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    res = ols_classical(np.column_stack([np.ones(5), x]), 1.0 + 2.0 * x)
    np.testing.assert_allclose(res["coef"], [1.0, 2.0], atol=1e-12)
    assert res["r2"] == pytest.approx(1.0)
    assert res["df_resid"] == 3


# -- the batched permutation gammas --------------------------------------------


def test_batched_gamma_equals_a_loop_of_fits():
    # FWL: gamma_perm = d'r / d'Md for every permuted d, with r fixed; it must equal
    # a separate least-squares fit per permutation.
    x, y, d = _toy()
    idx = stratified_permutation_indices(stratum_labels(x, 5), 300, np.random.default_rng(0))
    D = d[idx]
    np.testing.assert_allclose(group_shift_batch(x, y, D), _loop_gammas(x, y, D), rtol=1e-9, atol=1e-12)


def test_batched_gamma_of_observed_labels_is_the_ols_gamma():
    # One row equal to the observed labels gives the OLS coefficient itself.
    x, y, d = _toy()
    A = np.column_stack([np.ones_like(x), x, d])
    assert group_shift_batch(x, y, d[None, :])[0] == pytest.approx(ols_classical(A, y)["coef"][2], rel=1e-12)


def test_batched_gamma_is_nan_for_a_label_in_the_span_of_the_design():
    # A constant label is collinear with the intercept: gamma is not identified.
    x, y, _ = _toy()
    assert np.isnan(group_shift_batch(x, y, np.ones((1, x.size)))[0])


def test_permutations_move_labels_only_within_their_stratum():
    x, _, _ = _toy(n=97)
    strata = stratum_labels(x, 10)
    idx = stratified_permutation_indices(strata, 500, np.random.default_rng(3))
    # Every row is a permutation of 0..n-1 ...
    assert np.all(np.sort(idx, axis=1) == np.arange(x.size))
    # ... and sends each position to a position of the same stratum.
    assert np.all(strata[idx] == strata[None, :])
    # The labels do move (a test that never permuted would pass the line above).
    assert np.mean(idx != np.arange(x.size)) > 0.5


def test_strata_follow_pandas_qcut():
    # 10 quantile bins of 100 distinct values hold 10 each (qcut semantics).
    x = np.random.default_rng(0).normal(size=100)
    assert np.bincount(stratum_labels(x, 10)).tolist() == [10] * 10


def test_same_seed_same_p_and_different_seed_different_stream():
    x, y, d = _toy(n=80)
    post = d.astype(bool)
    a = shift_test(_pct(x), _pct(y), post, rng=np.random.default_rng(7), n_perm=500, eps=EPS, n_bins=N_BINS)
    b = shift_test(_pct(x), _pct(y), post, rng=np.random.default_rng(7), n_perm=500, eps=EPS, n_bins=N_BINS)
    c = shift_test(_pct(x), _pct(y), post, rng=np.random.default_rng(8), n_perm=500, eps=EPS, n_bins=N_BINS)
    # The permutation stream is the only randomness: same seed, identical result.
    assert a == b
    # A different stream gives a different null sample (its mean differs).
    assert a["null_mean"] != c["null_mean"]


def test_p_value_uses_the_plus_one_convention():
    # With a huge planted shift no permutation reaches gamma_obs: p = 1/(n_perm+1).
    x, y, d = _toy()
    y = y + 10.0 * d
    res = shift_test(_pct(x, 4), _pct(y, 4), d.astype(bool), rng=np.random.default_rng(0), n_perm=99, n_bins=4, eps=EPS)
    assert res["n_perm_ge"] == 0
    assert res["p_value"] == pytest.approx(1.0 / 100.0)


def test_common_support_is_inclusive_at_both_ends():
    x = np.array([0.0, 1.0, 2.0, 3.0, 1.0, 2.0, 4.0])
    post = np.array([False, False, False, False, True, True, True])
    mask, lo, hi = common_support(x, post)
    # pre spans [0, 3], post [1, 4]: support [1, 3] keeps the points at 1 and 3.
    assert (lo, hi) == (1.0, 3.0)
    assert mask.tolist() == [False, True, True, True, True, True, False]


def test_clipped_logit_clips_zero_and_hundred_percent():
    # 0% and 100% become logit(eps) and logit(1-eps), finite and symmetric.
    v = clipped_logit([0.0, 50.0, 100.0], eps=1e-6)
    assert v[1] == 0.0
    assert v[0] == pytest.approx(-v[2]) and v[0] == pytest.approx(np.log(1e-6 / (1 - 1e-6)))


# -- the real tables -------------------------------------------------------------


@pytest.fixture(scope="module")
def merged(tables):
    # cutoff: the AIME-2025 release date (claims/000, UPSTREAM.md "Claim 000"); the exports through the data lock
    return merge_aa_exports(tables.frame("aa_math500"), tables.frame("aa_aime2025"), cutoff="2025-02-06")


def test_real_merge_and_support_sizes(merged):
    # the authors' counts (tests/results/reference_numbers.yaml): the inner join, the support and its groups
    assert len(merged) == reference("shift_test.n_merged")[0]
    res = shift_test(
        merged["math_500_pct"],
        merged["aime_2025_pct"],
        merged["post"],
        rng=np.random.default_rng(0),
        n_perm=10,
        eps=EPS,
        n_bins=N_BINS,
    )
    assert (res["n"], res["n_pre"], res["n_post"]) == tuple(
        reference(f"shift_test.{k}")[0] for k in ("n_support", "n_pre", "n_post")
    )


def test_real_regression_matches_the_authors_values(merged):
    res = shift_test(
        merged["math_500_pct"],
        merged["aime_2025_pct"],
        merged["post"],
        rng=np.random.default_rng(0),
        eps=EPS,
        n_bins=N_BINS,
        n_perm=2000,
    )
    # The authors' values (tests/results/reference_numbers.yaml), printed to 4 decimals; OLS is deterministic,
    # so agreement to the printed precision is required.
    for key in ("gamma", "se", "t", "slope", "r2"):
        assert res[key] == approx(f"shift_test.{key}"), key


def test_real_regression_matches_statsmodels(merged):
    sm = pytest.importorskip("statsmodels.api")
    X = clipped_logit(merged["math_500_pct"], EPS)
    Y = clipped_logit(merged["aime_2025_pct"], EPS)
    mask, _, _ = common_support(X, merged["post"].to_numpy())
    A = np.column_stack([np.ones(mask.sum()), X[mask], merged["post"].to_numpy(float)[mask]])
    ours, ref = ols_classical(A, Y[mask]), sm.OLS(Y[mask], A).fit()
    # Same estimator on the same 90 rows: agreement to rounding.
    np.testing.assert_allclose(ours["coef"], ref.params, rtol=1e-9)
    np.testing.assert_allclose(ours["se"], ref.bse, rtol=1e-9)
    assert ours["r2"] == pytest.approx(ref.rsquared, rel=1e-9)


def test_real_p_value_agrees_with_the_authors_within_their_monte_carlo_error(merged):
    # The authors' p = 0.1484 is itself a 2000-permutation estimate (MC s.e.
    # sqrt(p(1-p)/2000) = 0.0080). A 50k-permutation estimate of the exact p
    # (MC s.e. 0.0015) must lie within 3 of their s.e.
    res = shift_test(
        merged["math_500_pct"],
        merged["aime_2025_pct"],
        merged["post"],
        rng=np.random.default_rng(0),
        n_perm=50_000,
        eps=EPS,
        n_bins=N_BINS,
    )
    assert abs(res["p_value"] - 0.1484) < 3 * np.sqrt(0.1484 * (1 - 0.1484) / 2000)
    # The stratified null is not centred at 0 (the authors': near +0.29).
    assert res["null_mean"] == approx("shift_test.null_mean")
    # Not significant at 0.05, the claim's second half.
    assert res["p_value"] > 0.05


def test_real_controls(merged):
    x, y, post = merged["math_500_pct"], merged["aime_2025_pct"], merged["post"]
    base = shift_test(x, y, post, rng=np.random.default_rng(0), eps=EPS, n_bins=N_BINS, n_perm=2000)
    infl = inflation_control(x, y, post, rng=np.random.default_rng(0), shift=0.8, eps=EPS, n_bins=N_BINS, n_perm=2000)
    # OLS is linear in y and the support depends on x only: gamma rises by exactly 0.8.
    assert infl["gamma"] - base["gamma"] == pytest.approx(0.8, abs=1e-10)
    # No permutation reaches the inflated gamma: p at its floor 1/2001.
    assert infl["p_value"] == pytest.approx(1 / 2001)
    rel = relabel_control(x, y, post, rng=np.random.default_rng(1), n_draws=200, eps=EPS)
    # Random labels: the mean gamma is 0 up to its Monte Carlo error sd/sqrt(200).
    assert abs(rel["mean"]) < 3 * rel["sd"] / np.sqrt(200)


def test_real_eps_sensitivity(merged):
    rows = eps_sensitivity(
        merged["math_500_pct"],
        merged["aime_2025_pct"],
        merged["post"],
        rng=np.random.default_rng(0),
        eps_grid=(1e-6, 1e-4, 1e-3, 1e-2),
        n_bins=N_BINS,
        n_perm=2000,
    )
    gam = [r["gamma"] for r in rows]
    # One in-support pre-release model scores AIME = 0; a larger clip lifts its logit
    # and shrinks gamma (the authors' 0.31 at 1e-2, tests/results/reference_numbers.yaml) ...
    assert gam == sorted(gam, reverse=True)
    assert gam[-1] == approx("shift_test.gamma_at_eps_0.01")
    # ... while p barely moves (common random numbers: same permutations per eps).
    ps = [r["p_value"] for r in rows]
    assert max(ps) - min(ps) < 0.02
