"""Interval methods from cluster resamples: percentile, BCa with a cluster jackknife, m-out-of-n subsampling."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from harness.stats.intervals import (
    Interval,
    bca,
    bias_correction,
    cluster_jackknife,
    cluster_subsample,
    cluster_subsample_indices,
    jackknife_acceleration,
    jackknife_groups,
    percentile,
    subsample_size,
    subsampling,
)
from harness.stats.resample import percentile_interval

pytestmark = pytest.mark.filterwarnings("error")


def _mean_of(y):
    return lambda idx: {"mean": float(np.mean(y[idx]))}


# -- percentile ------------------------------------------------------------------------------------------------


def test_percentile_is_the_resample_module_interval_and_counts_failures():
    draws = np.array([0.1, 0.4, np.nan, 0.2, 0.9, np.inf, 0.5])
    iv = percentile(draws, 0.8)
    ref = percentile_interval(draws, 0.8)
    assert (iv.lo, iv.hi, iv.n_used, iv.n_failed) == (ref["lo"], ref["hi"], 5, 2)
    assert iv.method == "percentile" and iv.ok and iv.covers(0.3) and not iv.covers(0.95)


def test_no_finite_draw_gives_no_interval():
    iv = percentile([np.nan, np.nan])
    assert not iv.ok and math.isnan(iv.width) and not iv.covers(0.0) and iv.info["why"] == "no finite draw"


def test_interval_covers_is_closed_and_rejects_non_finite_values():
    iv = Interval(1.0, 2.0, 0.95, "percentile", 10, 0)
    assert iv.covers(1.0) and iv.covers(2.0) and not iv.covers(2.0000001) and not iv.covers(math.nan)
    assert iv.to_dict()["lo"] == 1.0 and iv.width == 1.0


# -- BCa -------------------------------------------------------------------------------------------------------


def test_bca_with_zero_bias_and_zero_acceleration_is_the_percentile_interval():
    rng = np.random.default_rng(0)
    est = 0.5
    d = rng.exponential(size=150)
    draws = np.concatenate([est + d, est - d])  # exactly half below the estimate, none tied: z0 = 0
    jack = np.array([1.0, -1.0, 2.0, -2.0, 0.0])  # symmetric: sum of cubed deviations 0, a = 0
    iv = bca(draws, est, jack, 0.9)
    assert iv.info["z0"] == 0.0 and iv.info["acceleration"] == 0.0
    ref = percentile(draws, 0.9)
    assert iv.lo == pytest.approx(ref.lo, rel=1e-13) and iv.hi == pytest.approx(ref.hi, rel=1e-13)
    assert iv.info["alpha_lo"] == pytest.approx(0.05, abs=1e-15)


def test_acceleration_of_the_mean_by_hand():
    # x = (0, 0, 0, 1): delete-one means (1/3, 1/3, 1/3, 0); d = mean - theta_(i) = (-1/12, -1/12, -1/12, 1/4)
    # sum d^3 = 3(-1/1728) + 1/64 = 1/72, sum d^2 = 3/144 + 1/16 = 1/12  ->  a = (1/72) / (6 (1/12)^1.5) = sqrt(3)/18
    x = np.array([0.0, 0.0, 0.0, 1.0])
    jk = cluster_jackknife(_mean_of(x), 4)
    np.testing.assert_allclose(jk.column("mean"), [1 / 3, 1 / 3, 1 / 3, 0.0])
    assert jackknife_acceleration(jk.column("mean")) == pytest.approx(math.sqrt(3) / 18, rel=1e-12)


def test_acceleration_is_zero_without_information_and_ignores_failed_values():
    assert jackknife_acceleration([0.3, 0.3, 0.3]) == 0.0
    assert jackknife_acceleration([0.3]) == 0.0
    vals = np.array([1 / 3, 1 / 3, 1 / 3, 0.0])
    assert jackknife_acceleration(np.r_[vals, np.nan]) == jackknife_acceleration(vals)


def test_bias_correction_uses_mid_ranks_for_ties():
    assert bias_correction([1.0, 2.0, 2.0, 3.0], 2.0) == 0.0  # (1 below + 3 at-or-below) / 8 = 1/2
    assert bias_correction([1.0, 2.0, 3.0, 4.0], 2.0) == pytest.approx(stats.norm.ppf(3 / 8))
    assert bias_correction([1.0, 2.0], 0.5) == -math.inf and bias_correction([np.nan], 0.5) != 0.0


def test_bca_matches_scipy_on_unclustered_data():
    # scipy draws its resamples as rng.integers(0, n, (B, n)) in one call (batch=None): the same draws here,
    # every row its own cluster and the delete-one jackknife; a skewed statistic (the variance of exponentials).
    x = np.random.default_rng(11).exponential(size=30)
    B, seed = 999, 7
    ref = stats.bootstrap(
        (x,), np.var, method="BCa", n_resamples=B, confidence_level=0.9, rng=np.random.default_rng(seed)
    )
    idx = np.random.default_rng(seed).integers(0, x.size, (B, x.size))
    draws = np.var(x[idx], axis=-1)
    jk = cluster_jackknife(lambda i: {"var": float(np.var(x[i]))}, x.size)
    iv = bca(draws, float(np.var(x)), jk.column("var"), 0.9)
    assert iv.info["acceleration"] > 0.01  # the variance of exponentials is right-skewed
    assert iv.lo == pytest.approx(ref.confidence_interval.low, rel=1e-10)
    assert iv.hi == pytest.approx(ref.confidence_interval.high, rel=1e-10)


def test_bca_gives_no_interval_when_the_draws_miss_the_estimate_or_a_is_too_large():
    iv = bca([1.0, 1.1, 1.2], 0.5, [0.4, 0.5, 0.6])
    assert not iv.ok and "z0" in iv.info["why"]
    # 1 - a (z0 + z) <= 0: a one-outlier jackknife (a near its ceiling 1/6) with the estimate far in the
    # upper tail of the draws (z0 = Phi^-1(0.9998) = 3.5) at level 0.999 (z = 3.29): a (z0 + z) = 1.1
    huge = bca(np.arange(10000.0), 9997.5, np.r_[np.zeros(99), -1.0], 0.999)
    assert huge.info["acceleration"] > 0.16 and huge.info["z0"] > 3.5
    assert not huge.ok and "acceleration" in huge.info["why"]


# -- the cluster jackknife -----------------------------------------------------------------------------------


def test_cluster_jackknife_deletes_whole_clusters():
    seen = []

    def stat(idx):
        seen.append(idx.tolist())
        return {"n": float(idx.size)}

    jk = cluster_jackknife(stat, 5, [0, 0, 1, 2, 2])
    assert seen == [[2, 3, 4], [0, 1, 3, 4], [0, 1, 2]]
    assert jk.n_groups == 3 and jk.column("n").tolist() == [3.0, 4.0, 3.0]


def test_jackknife_groups_partition_the_clusters_deterministically():
    groups = jackknife_groups(23, 5, np.random.default_rng(3))
    members = np.sort(np.concatenate(groups))
    assert members.tolist() == list(range(23))
    assert sorted(len(g) for g in groups) == [4, 4, 5, 5, 5]
    again = jackknife_groups(23, 5, np.random.default_rng(3))
    assert all(np.array_equal(a, b) for a, b in zip(groups, again))
    other = jackknife_groups(23, 5, np.random.default_rng(4))
    assert not all(np.array_equal(a, b) for a, b in zip(groups, other))
    assert [g.tolist() for g in jackknife_groups(4)] == [[0], [1], [2], [3]]
    with pytest.raises(ValueError, match="explicit rng"):
        jackknife_groups(23, 5)
    with pytest.raises(ValueError, match="n_groups"):
        jackknife_groups(23, 1, np.random.default_rng(0))


def test_grouped_jackknife_values_by_hand_and_g_equal_to_G_is_delete_one():
    y = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0])
    ids = np.array([0, 1, 2, 3, 4, 5])
    jk = cluster_jackknife(_mean_of(y), 6, ids, n_groups=3, rng=np.random.default_rng(5))
    for k, members in enumerate(jk.groups):
        keep = np.setdiff1d(ids, members)
        assert jk.column("mean")[k] == pytest.approx(y[keep].mean())
    full = cluster_jackknife(_mean_of(y), 6, ids)
    same = cluster_jackknife(_mean_of(y), 6, ids, n_groups=6, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(full.values, same.values)


def test_grouped_acceleration_estimates_the_delete_one_one_on_average():
    # Random groups of h clusters: the group values' skewness has the delete-one one's expectation (docstring).
    y = np.random.default_rng(2).exponential(size=2000)
    a_full = jackknife_acceleration(cluster_jackknife(_mean_of(y), y.size).column("mean"))
    rng = np.random.default_rng(9)
    a_g = [
        jackknife_acceleration(cluster_jackknife(_mean_of(y), y.size, n_groups=50, rng=rng).column("mean"))
        for _ in range(150)
    ]
    se = np.std(a_g, ddof=1) / math.sqrt(len(a_g))
    assert a_full == pytest.approx(2.0 / (6.0 * math.sqrt(y.size)), rel=0.3)  # skewness 2 / (6 sqrt(G))
    assert abs(np.mean(a_g) - a_full) < 4 * se


# -- subsampling -----------------------------------------------------------------------------------------------


def test_subsample_size_rule():
    assert subsample_size(231) == 38  # ceil(231 ** (2/3)) = ceil(37.66)
    assert subsample_size(212) == 36
    assert subsample_size(3) == 2  # held below G
    assert subsample_size(100, 0.5) == 10
    with pytest.raises(ValueError):
        subsample_size(2)


def test_subsamples_draw_distinct_whole_clusters_and_are_deterministic():
    ids = np.repeat(np.arange(10), [1, 2, 3, 1, 2, 3, 1, 2, 3, 1])
    subs = cluster_subsample_indices(ids, 4, 50, np.random.default_rng(1))
    assert subs.cluster_draws.shape == (50, 4)
    assert all(np.unique(row).size == 4 for row in subs.cluster_draws)
    for i in (0, 17, 49):
        rows = subs[i]
        assert np.array_equal(np.sort(rows), np.flatnonzero(np.isin(ids, subs.cluster_draws[i])))
    again = cluster_subsample_indices(ids, 4, 50, np.random.default_rng(1))
    np.testing.assert_array_equal(subs.cluster_draws, again.cluster_draws)
    # every cluster is drawn about equally often (4/10 of the subsamples)
    counts = np.bincount(subs.cluster_draws.ravel(), minlength=10)
    assert counts.sum() == 200 and counts.min() > 5


def test_cluster_subsample_evaluates_the_statistic_and_its_rng_does_not_change_the_draws():
    y = np.arange(12.0)
    ids = np.repeat(np.arange(6), 2)
    a = cluster_subsample(_mean_of(y), 12, ids, m=3, n_resamples=20, rng=np.random.default_rng(4))
    b = cluster_subsample(
        lambda idx, rng: {"mean": float(np.mean(y[idx]))},
        12,
        ids,
        m=3,
        n_resamples=20,
        rng=np.random.default_rng(4),
        with_rng=True,
    )
    np.testing.assert_array_equal(a.values, b.values)
    assert a.n_clusters == 6 and a.values.shape == (20, 1)


def test_subsampling_interval_by_hand():
    est = 1.0
    draws = est + np.array([-2.0, -1.0, 0.0, 1.0, 2.0])  # deviations: q(0.25) = -1, q(0.75) = 1 (linear rule)
    iv = subsampling(draws, est, m=25, n_clusters=100, level=0.5, fpc=False)
    assert (iv.lo, iv.hi) == pytest.approx((0.5, 1.5))  # scale sqrt(25 / 100) = 1/2
    iv = subsampling(draws, est, m=25, n_clusters=100, level=0.5)
    s = math.sqrt(25 / 75)  # with the finite population correction: sqrt(m / (G - m))
    assert (iv.lo, iv.hi) == pytest.approx((1 - s, 1 + s)) and iv.info["scale"] == pytest.approx(s)
    # skewed deviations are reflected: a long right tail of theta_m - theta widens the interval on the left
    iv = subsampling(est + np.array([-1.0, 0.0, 0.0, 3.0, 5.0]), est, m=25, n_clusters=100, level=0.5, fpc=False)
    assert (iv.lo, iv.hi) == pytest.approx((1 - 0.5 * 3.0, 1 - 0.5 * 0.0))
    iv = subsampling(draws, est, m=16, n_clusters=100, level=0.5, rate=1.0, fpc=False)
    assert iv.info["scale"] == pytest.approx(0.16)


def test_subsampling_refuses_what_it_cannot_do():
    with pytest.raises(ValueError, match="rate = 1/2"):
        subsampling([1.0, 2.0], 1.5, m=5, n_clusters=10, rate=1.0)
    with pytest.raises(ValueError, match="m must be"):
        subsampling([1.0, 2.0], 1.5, m=10, n_clusters=10)
    assert not subsampling([np.nan], 1.0, m=5, n_clusters=10).ok


def test_subsampling_for_the_mean_has_the_right_width_with_the_correction():
    # The subsampling law of sqrt(m/(G-m)) (mean_m - mean) has the sd of the mean over G clusters.
    y = np.random.default_rng(8).normal(size=400)
    G, m = y.size, subsample_size(y.size)
    draws = cluster_subsample(_mean_of(y), G, None, m=m, n_resamples=4000, rng=np.random.default_rng(1)).column("mean")
    sd_scaled = np.std(draws - y.mean()) * math.sqrt(m / (G - m))
    assert sd_scaled == pytest.approx(np.std(y, ddof=1) / math.sqrt(G), rel=0.05)


def test_the_normal_interval_is_the_bias_corrected_estimate_plus_minus_z_standard_errors():
    from scipy.stats import norm

    from harness.stats.intervals import normal

    draws = np.array([1.0, 2.0, 3.0, 4.0, np.nan])  # mean 2.5, sd (ddof 1) 1.2910; the nan is counted, not used
    iv = normal(draws, 3.0, level=0.90)  # the draws sit 0.5 below the estimate: the centre moves 0.5 above it
    half = norm.ppf(0.95) * np.std([1.0, 2.0, 3.0, 4.0], ddof=1)
    assert (iv.lo, iv.hi) == pytest.approx((3.5 - half, 3.5 + half)) and (iv.n_used, iv.n_failed) == (4, 1)
    assert math.isnan(normal([1.0, 2.0], 0.0).lo)  # too few draws for a standard deviation worth the name
