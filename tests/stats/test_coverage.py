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


def test_rejects_empty():
    with pytest.raises(ValueError):
        coverage([], 0.5)
