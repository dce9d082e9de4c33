"""Coverage metrics on toy data with hand-worked answers."""

import math

import numpy as np
import pytest

from harness.stats.coverage import (
    bin_coverages,
    binned_signed_coverage_error,
    calibration_error,
    count_above,
    coverage,
    exceedance_binomial_pvalue,
    exceedance_cluster_test,
    share_above,
    signed_coverage_error,
)

pytestmark = pytest.mark.filterwarnings("error")

Y = np.array([0.1, 0.5, 0.9, 1.0])


def test_coverage_is_inclusive():
    # 0.1, 0.5 and 0.9 are <= 0.9 (0.9 counts as covered), 1.0 is not: 3/4
    assert coverage(Y, 0.9) == 0.75
    assert count_above(Y, 0.9) == 1
    assert share_above(Y, 0.9) == 0.25


def test_signed_coverage_error_sign():
    # 0.75 covered against tau = 0.9: under-coverage, -0.15
    assert signed_coverage_error(Y, 0.9, 0.9) == pytest.approx(-0.15, abs=1e-15)
    # everything covered at tau = 0.98: +0.02
    assert signed_coverage_error(Y, 2.0, 0.98) == pytest.approx(0.02, abs=1e-15)


def test_calibration_and_bin_averaged_errors():
    y = [0.0, 0.0, 1.0, 0.0]
    q = [1.0, 1.0, 0.5, 0.5]
    bins = [0, 0, 7, 7]  # labels need not be contiguous; only non-empty bins count
    cov, n = bin_coverages(y, q, bins)
    # bin 0: both covered -> 1.0; bin 7: 1.0 > 0.5 not covered, 0.0 covered -> 0.5
    assert cov.tolist() == [1.0, 0.5] and n.tolist() == [2, 2]
    # calibration: (|1.0 - 0.9| + |0.5 - 0.9|) / 2 = (0.1 + 0.4) / 2 = 0.25
    assert calibration_error(y, q, bins, 0.9) == pytest.approx(0.25, abs=1e-15)
    # bin-averaged signed: (0.1 - 0.4) / 2 = -0.15
    assert binned_signed_coverage_error(y, q, bins, 0.9) == pytest.approx(-0.15, abs=1e-15)


def test_bin_coverages_count_by_label_as_by_rank():
    # non-negative integer labels are counted directly (no sort); negative or float labels by their rank
    rng = np.random.default_rng(0)
    y, q = rng.uniform(size=500), rng.uniform(size=500)
    labels = rng.choice([0, 2, 3, 9], 500)
    by_label = bin_coverages(y, q, labels)
    for other in (labels - 5, labels.astype(float)):
        by_rank = bin_coverages(y, q, other)
        for a, b in zip(by_label, by_rank):
            np.testing.assert_array_equal(a, b)
    assert by_label[1].tolist() == np.bincount(labels)[[0, 2, 3, 9]].tolist()


def test_bin_average_weights_bins_not_points():
    # bin 0: 9 points all covered; bin 1: 1 point not covered.
    y = np.r_[np.zeros(9), 1.0]
    q = np.full(10, 0.5)
    bins = np.r_[np.zeros(9, int), 1]
    # pooled: 0.9 - 0.98 = -0.08; per bin: ((1 - 0.98) + (0 - 0.98)) / 2 = -0.48
    assert signed_coverage_error(y, q, 0.98) == pytest.approx(-0.08, abs=1e-15)
    assert binned_signed_coverage_error(y, q, bins, 0.98) == pytest.approx(-0.48, abs=1e-15)


def test_binomial_pvalue_matches_hand_sum():
    # P(K >= k) for K ~ Bin(n, p0), summed term by term
    n, k, p0 = 50, 4, 0.02
    tail = sum(math.comb(n, j) * p0**j * (1 - p0) ** (n - j) for j in range(k, n + 1))
    assert exceedance_binomial_pvalue(k, n, p0) == pytest.approx(tail, rel=1e-10)
    # k = 0: the event K >= 0 is certain
    assert exceedance_binomial_pvalue(0, n, p0) == pytest.approx(1.0)
    # k = n: only all-exceedances, p0**n
    assert exceedance_binomial_pvalue(3, 3, 0.5) == pytest.approx(0.125)


def test_cluster_test_with_one_point_per_cluster_is_the_binomial_variance_times_g_over_g_minus_1():
    above = np.r_[np.ones(7), np.zeros(93)]
    out = exceedance_cluster_test(above, np.arange(100), 0.02)
    binomial = 0.07 * 0.93 / 100
    assert out["se"] ** 2 == pytest.approx(100 / 99 * binomial, rel=1e-12)
    assert out["design_effect"] == pytest.approx(100 / 99, rel=1e-12) and out["n_clusters"] == 100
    # z = (0.07 - 0.02) / se, p = 1 - Phi(z) by the error function
    z = 0.05 / out["se"]
    assert out["p"] == pytest.approx(0.5 * math.erfc(z / math.sqrt(2)), rel=1e-9)


def test_exceedances_shared_by_whole_clusters_give_a_design_effect_of_the_cluster_size():
    # 40 base models of 25 fine-tunes each; 3 base models lie above with all their fine-tunes: the variance is that
    # of 40 draws, not 1000, so the design effect is 25 (times G / (G - 1) = 40 / 39)
    clusters = np.repeat(np.arange(40), 25)
    above = clusters < 3
    out = exceedance_cluster_test(above, clusters, 0.02)
    assert out["design_effect"] == pytest.approx(25 * 40 / 39, rel=1e-12)
    # the same exceedances as independent models would be far more significant
    assert exceedance_binomial_pvalue(int(above.sum()), above.size, 0.02) < 1e-10 < 0.01 < out["p"]


def test_cluster_test_p_is_a_probability_falling_as_exceedances_grow():
    # exceedances added whole cluster by whole cluster, and point by point among singletons
    for size in (1, 5):
        clusters = np.repeat(np.arange(50), size)
        ps = [exceedance_cluster_test(clusters < k, clusters, 0.02)["p"] for k in range(50)]
        assert all(0.0 <= p <= 1.0 for p in ps)
        assert all(a >= b for a, b in zip(ps, ps[1:])) and ps[0] == 1.0 and ps[-1] < 1e-6
    # no exceedance: no binomial variance to compare with, and nothing against the null
    none = exceedance_cluster_test(np.zeros(10), np.arange(10), 0.02)
    assert none["p"] == 1.0 and none["design_effect"] is None


def test_cluster_test_refuses_what_it_cannot_estimate():
    with pytest.raises(ValueError, match="at least 2 clusters"):
        exceedance_cluster_test([1, 0, 0], ["a", "a", "a"])
    with pytest.raises(ValueError, match="one cluster each"):
        exceedance_cluster_test([1, 0, 0], ["a", "b"])
    with pytest.raises(ValueError, match="non-empty"):
        exceedance_cluster_test([], [])


def test_rejects_empty():
    with pytest.raises(ValueError):
        coverage([], 0.5)
