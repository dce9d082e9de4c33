"""Cluster bootstrap: the resampling unit, the driver, and the summaries of its draws."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from harness.core.decisions import claimed_side, decide
from harness.stats.methods import METHODS, decision_interval
from harness.stats.resample import (
    BootstrapDraws,
    cluster_bootstrap,
    cluster_bootstrap_indices,
    cluster_ids_from_labels,
    concat_draws,
    percentile_interval,
)

pytestmark = pytest.mark.filterwarnings("error")


def _draws(columns: dict) -> BootstrapDraws:
    """Hand-made draws of named quantities (all rows one run)."""
    names = tuple(columns)
    values = np.column_stack([np.asarray(columns[k], dtype=float) for k in names])
    n = values.shape[0]
    return BootstrapDraws(names, values, np.arange(n), n, n, n, 0)


# -- cluster ids ---------------------------------------------------------------


def test_missing_labels_are_singleton_clusters():
    # "a" and "b" are clusters by first appearance (0, 1); None, NaN and "" are
    # missing, and each becomes a cluster of its own, numbered after them in row order.
    ids = cluster_ids_from_labels(["a", None, "b", "a", float("nan"), "", "b"])
    assert ids.tolist() == [0, 2, 1, 0, 3, 4, 1]


def test_cluster_ids_from_a_pandas_column():
    # As read from the leaderboard CSV: missing base models are NaN in an object column.
    col = pd.Series(["llama-3-8b", np.nan, "mistral-7b", "llama-3-8b", np.nan])
    ids = cluster_ids_from_labels(col)
    assert ids.tolist() == [0, 2, 1, 0, 3]
    assert np.unique(ids).size == 4  # 2 named bases + 2 singletons


def test_all_labels_missing_is_the_row_bootstrap():
    assert cluster_ids_from_labels([None, None, None]).tolist() == [0, 1, 2]


def test_a_singleton_from_a_missing_label_is_resampled_as_a_unit_of_one():
    ids = cluster_ids_from_labels(["a", "a", "a", None])
    res = cluster_bootstrap_indices(ids, 300, np.random.default_rng(0))
    # G = 2 clusters: {0,1,2} and the unlabelled row 3. Each resample draws 2 clusters,
    # so its length is 3k + (2 - k) for k draws of the big one: 2, 4 or 6.
    lengths = {len(r) for r in res}
    assert lengths == {2, 4, 6}
    # The unlabelled row never travels with the others: row 3 appears exactly 2 - k times.
    for r in res:
        k = np.sum(r == 0)
        assert np.sum(r == 3) == 2 - k


# -- resampling the clusters ---------------------------------------------------------


def test_hand_worked_resample_rows_follow_the_drawn_clusters():
    ids = np.array([0, 0, 1, 2, 2, 2])
    res = cluster_bootstrap_indices(ids, 50, np.random.default_rng(3))
    members = {0: [0, 1], 1: [2], 2: [3, 4, 5]}
    assert res.cluster_draws.shape == (50, 3)  # G = 3 clusters drawn per resample
    for draw, rows in zip(res.cluster_draws, res):
        # The plain way: the rows of each drawn cluster, in draw order.
        expected = [i for g in draw for i in members[int(g)]]
        assert rows.tolist() == expected


def test_clusters_stay_whole_and_as_many_are_drawn_as_there_are():
    rng = np.random.default_rng(11)
    sizes = rng.integers(1, 12, size=37)
    ids = rng.permutation(np.repeat(np.arange(37), sizes))  # clusters' rows scattered in the table
    res = cluster_bootstrap_indices(ids, 400, np.random.default_rng(5))
    for rows in res:
        counts = np.bincount(rows, minlength=ids.size)
        # Every row of a cluster appears the same number of times k_g (the times the cluster
        # was drawn), so the cluster contributes k_g * size_g rows ...
        k = np.array([counts[ids == g][0] for g in range(37)])
        for g in range(37):
            assert np.all(counts[ids == g] == k[g])
        # ... and G = 37 clusters are drawn in all.
        assert k.sum() == 37
        assert rows.size == int(k @ sizes)
    # Clusters are drawn with replacement: some are drawn twice, some not at all.
    assert any(np.unique(d).size < 37 for d in res.cluster_draws)


def test_draws_are_uniform_over_clusters():
    # Each cluster is drawn with probability 1/G at each of the G draws: over B resamples
    # its count is Binomial(B*G, 1/G), mean B, sd sqrt(B (1 - 1/G)).
    G, B = 8, 5000
    res = cluster_bootstrap_indices(np.arange(G), B, np.random.default_rng(0))
    counts = np.bincount(res.cluster_draws.ravel(), minlength=G)
    assert np.all(np.abs(counts - B) < 4 * math.sqrt(B * (1 - 1 / G)))


def test_same_seed_same_resamples_and_a_different_seed_differs():
    ids = np.repeat(np.arange(20), 3)
    a = cluster_bootstrap_indices(ids, 100, np.random.default_rng(7))
    b = cluster_bootstrap_indices(ids, 100, np.random.default_rng(7))
    c = cluster_bootstrap_indices(ids, 100, np.random.default_rng(8))
    assert np.array_equal(a.cluster_draws, b.cluster_draws)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a.cluster_draws, c.cluster_draws)


def test_stratified_resampling_keeps_each_stratum_its_clusters():
    ids = np.array([0, 0, 1, 2, 3, 3, 3, 4])
    strata = np.array(["p", "p", "p", "q", "q", "q", "q", "q"])  # clusters 0,1 in p; 2,3,4 in q
    res = cluster_bootstrap_indices(ids, 200, np.random.default_rng(1), strata=strata)
    for draw in res.cluster_draws:
        # Two clusters drawn from p's {0, 1}, three from q's {2, 3, 4}.
        assert sum(g in (0, 1) for g in draw) == 2 and sum(g in (2, 3, 4) for g in draw) == 3
    # Within a stratum, draws are with replacement (both of p's clusters can come twice).
    assert {tuple(sorted(d[:2])) for d in res.cluster_draws} == {(0, 0), (0, 1), (1, 1)}


def test_stratified_resampling_refuses_a_cluster_spanning_strata():
    with pytest.raises(ValueError, match="1 clusters span"):
        cluster_bootstrap_indices([0, 0, 1], 5, np.random.default_rng(0), strata=[0, 1, 1])


def test_cluster_ids_must_be_contiguous_integers():
    with pytest.raises(ValueError, match="0 .. G-1"):
        cluster_bootstrap_indices([0, 2, 2], 5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="integers"):
        cluster_bootstrap_indices(["a", "b"], 5, np.random.default_rng(0))


# -- the driver ------------------------------------------------------------------------


def _mean_stat(y):
    return lambda idx: {"mean": float(y[idx].mean()), "n": float(idx.size)}


def test_driver_evaluates_the_statistic_on_each_resample():
    y = np.arange(6.0)
    ids = np.array([0, 0, 1, 2, 2, 2])
    out = cluster_bootstrap(_mean_stat(y), 6, ids, n_resamples=30, rng=np.random.default_rng(4))
    res = cluster_bootstrap_indices(ids, 30, np.random.default_rng(4))  # the same draws
    assert out.names == ("mean", "n")
    np.testing.assert_array_equal(out.column("mean"), [y[r].mean() for r in res])
    np.testing.assert_array_equal(out.column("n"), [r.size for r in res])
    assert (out.n_clusters, out.n_rows, out.n_raised) == (3, 6, 0)


def test_without_clusters_it_is_the_row_bootstrap():
    out = cluster_bootstrap(_mean_stat(np.arange(5.0)), 5, n_resamples=50, rng=np.random.default_rng(0))
    # Every row its own cluster: each resample has exactly n = 5 rows.
    assert out.n_clusters == 5 and np.all(out.column("n") == 5)


def test_chunks_equal_the_serial_run():
    y = np.random.default_rng(0).normal(size=40)
    ids = np.repeat(np.arange(10), 4)

    def stat(idx, rng):  # a statistic with its own randomness (e.g. random starts)
        return {"mean": float(y[idx].mean()), "jitter": float(rng.normal())}

    kw = {"n_resamples": 25, "with_rng": True}
    serial = cluster_bootstrap(stat, 40, ids, rng=np.random.default_rng(9), **kw)
    # As separate processes would do: each chunk from a generator built from the same seed.
    parts = [
        cluster_bootstrap(stat, 40, ids, rng=np.random.default_rng(9), chunk=ch, **kw)
        for ch in (range(17, 25), range(9), range(9, 17))
    ]
    joined = concat_draws(parts)
    np.testing.assert_array_equal(joined.values, serial.values)
    np.testing.assert_array_equal(joined.resample_ids, np.arange(25))
    # The per-resample generators differ between resamples (no shared stream).
    assert np.unique(serial.column("jitter")).size == 25


def test_parent_generator_advances_the_same_whatever_the_chunk():
    ids = np.repeat(np.arange(5), 2)
    r1, r2 = np.random.default_rng(2), np.random.default_rng(2)
    cluster_bootstrap(_mean_stat(np.ones(10)), 10, ids, n_resamples=20, rng=r1)
    cluster_bootstrap(
        lambda idx, rng: {"u": rng.random()}, 10, ids, n_resamples=20, rng=r2, chunk=range(3, 5), with_rng=True
    )
    assert r1.random() == r2.random()


def test_failed_resamples_are_nan_and_counted():
    y = np.arange(10.0)

    def stat(idx):
        if np.sum(idx == 0) >= 2:  # "the fit fails" when row 0 is drawn twice or more
            raise RuntimeError("no convergence")
        m = float(y[idx].mean())
        return {"mean": m, "ratio": m / float(idx.min()) if idx.min() > 0 else math.nan}

    out = cluster_bootstrap(stat, 10, n_resamples=200, rng=np.random.default_rng(0), catch=(RuntimeError,))
    res = cluster_bootstrap_indices(np.arange(10), 200, np.random.default_rng(0))
    raised = np.array([np.sum(r == 0) >= 2 for r in res])
    has_zero = np.array([np.any(r == 0) for r in res])
    assert out.n_raised == raised.sum() > 0
    assert np.array_equal(np.isnan(out.column("mean")), raised)
    # 'ratio' fails whenever row 0 is in the resample (raised or not).
    assert out.n_failed("ratio") == has_zero.sum()
    # An exception that is not declared propagates.
    with pytest.raises(RuntimeError):
        cluster_bootstrap(stat, 10, n_resamples=200, rng=np.random.default_rng(0))


# -- summaries -------------------------------------------------------------------------


def test_percentile_interval_hand_worked():
    # Draws 0, 1, ..., 100: the 2.5% and 97.5% quantiles (linear rule) are 2.5 and 97.5.
    iv = percentile_interval(np.arange(101.0), 0.95)
    assert (iv["lo"], iv["hi"]) == pytest.approx((2.5, 97.5))
    # Failed draws are left out and counted.
    iv = percentile_interval(np.r_[np.arange(101.0), np.nan, np.nan], 0.9)
    assert (iv["lo"], iv["hi"], iv["n_used"], iv["n_failed"]) == pytest.approx((5.0, 95.0, 101, 2))


def _coverage(n_sets, n_clusters, cluster_size, n_resamples, seed, *, use_clusters=True):
    """Share of data sets whose 95% percentile interval of the mean covers the true mean 0."""
    rng = np.random.default_rng(seed)
    ids = np.repeat(np.arange(n_clusters), cluster_size)
    hits = 0
    for _ in range(n_sets):
        # cluster effect (sd 1) shared by the cluster's rows, plus row noise (sd 0.3)
        y = np.repeat(rng.normal(size=n_clusters), cluster_size)
        if cluster_size > 1:
            y = y + rng.normal(scale=0.3, size=y.size)
        out = cluster_bootstrap(
            lambda idx, y=y: {"mean": float(y[idx].mean())},
            y.size,
            ids if use_clusters else None,
            n_resamples=n_resamples,
            rng=rng,
        )
        iv = percentile_interval(out.column("mean"), 0.95)
        hits += iv["lo"] <= 0.0 <= iv["hi"]
    return hits / n_sets


def _expected_percentile_coverage(G, level=0.95):
    # The percentile interval of a mean of G iid normal units is about mean +- z s_plug/sqrt(G),
    # s_plug = s sqrt((G-1)/G); (mean - mu)/(s/sqrt(G)) is t with G-1 df, so the coverage is
    # P(|t_{G-1}| < z sqrt((G-1)/G)), a little below the nominal level.
    z = stats.norm.ppf(0.5 + level / 2)
    return 2 * stats.t.cdf(z * math.sqrt((G - 1) / G), G - 1) - 1


@pytest.mark.parametrize("cluster_size", [1, 5])
def test_interval_of_a_mean_covers_at_about_the_nominal_rate(cluster_size):
    # cluster_size 1: iid normal rows. cluster_size 5: equal clusters with a strong cluster
    # effect; the mean is the mean of 60 iid cluster means, so the same expectation holds.
    M, G = 400, 60
    cov = _coverage(M, G, cluster_size, 250, seed=cluster_size)
    expected = _expected_percentile_coverage(G)  # 0.943
    assert abs(cov - expected) < 3.5 * math.sqrt(expected * (1 - expected) / M)


def test_resampling_rows_of_clustered_data_under_covers():
    # The same clustered data sets with the unit ignored (row bootstrap): the interval is
    # about sqrt(5) too narrow and covers far less often. The cluster bootstrap test above
    # would fail if the code resampled rows.
    assert _coverage(100, 60, 5, 250, seed=5, use_clusters=False) < 0.75


# -- the decision on an asserted ordering, on draws of known law ---------------------------------------


def test_a_coin_flip_is_inconclusive_and_a_wide_margin_supported():
    """Mirror pairs of clusters make the resampled mean symmetric about 0: no one-sided bound excludes 0. The
    same clusters shifted by 10 standard errors: every bound does."""
    rng = np.random.default_rng(0)
    G, B = 40, 1000
    v = rng.normal(size=G // 2)
    w = np.r_[v, -v]
    flip = cluster_bootstrap(
        lambda idx: {"m": float(w[idx].mean())}, G, np.arange(G), n_resamples=B, rng=np.random.default_rng(2)
    )
    wide = cluster_bootstrap(
        lambda idx: {"m": float(w[idx].mean() + 10.0)}, G, np.arange(G), n_resamples=B, rng=np.random.default_rng(3)
    )
    above = claimed_side(">")
    for name in ("percentile", "basic"):
        m = METHODS[name]
        iv = decision_interval(m, "m", 0.0, {("bootstrap",): flip}, G, 0.05)
        assert decide(iv.lo, iv.hi, above) == "inconclusive", name
        iv = decision_interval(m, "m", 10.0, {("bootstrap",): wide}, G, 0.05)
        assert decide(iv.lo, iv.hi, above) == "supported", name
        assert decide(iv.lo, iv.hi, claimed_side("<")) == "contradicted", name
