"""The interval for γ from inverting the shift test (#27, item 4), and the test's specification curve under the
null (Simonsohn, Simmons & Nelson 2020): toy designs with a known answer, and the interval's coverage by
simulation, on a toy where the stratified permutation test is exact and on claim 000's own design."""

from __future__ import annotations

import numpy as np
import pytest

from harness.resampling.multiverse import curve_p_value
from harness.stats.shift import (
    _inverted_by_counting,
    clipped_logit,
    common_support,
    group_shift_batch,
    inverted_interval,
    shift_test,
    stratified_permutation_indices,
    stratum_labels,
)
from harness.stats.specification_null import null_labels, shift_specification_null

pytestmark = pytest.mark.filterwarnings("error")

EPS = 1e-6


def _pct(v):
    """Percent scores whose clipped logit is ``v`` (no clipping at these sizes)."""
    return 100.0 / (1.0 + np.exp(-np.asarray(v)))


def _design(n=80, seed=0, shift=0.0, bins=4):
    """A toy where the release label is assigned at random within strata of x, a fixed number per stratum: the
    stratified permutation test is then exact (randomisation inference), so an interval from inverting it
    covers at least its nominal level. Returns x, the strata, a label maker and the response maker."""
    rng = np.random.default_rng(seed)
    x = np.sort(rng.normal(size=n))
    strata = stratum_labels(x, bins)

    def labels(r):
        d = np.zeros(n, dtype=bool)
        for s in np.unique(strata):
            members = np.flatnonzero(strata == s)
            d[r.choice(members, size=members.size // 2, replace=False)] = True
        return d

    return x, strata, labels


def _brute(g, a, c, alpha, grid):
    """The accepted shifts on a grid, counted the plain way: p_up and p_down of y - g0 d at each g0."""
    B = a.size
    keep = []
    for g0 in grid:
        perm, obs = a - g0 * c, g - g0
        up = (1 + np.sum(perm >= obs)) / (B + 1)
        down = (1 + np.sum(perm <= obs)) / (B + 1)
        keep.append(up >= alpha and down >= alpha)
    keep = np.asarray(keep)
    return grid[keep].min(), grid[keep].max()


def test_the_order_statistics_are_the_test_inverted():
    rng = np.random.default_rng(3)
    for _ in range(3):
        g = rng.normal(size=2)
        A = rng.normal(0.2, 0.3, (2, 199))
        c = rng.uniform(-0.3, 0.7, 199)
        lo, hi = inverted_interval(g, A, c, 0.05)
        m = int(np.ceil(0.05 * 200 - 1 - 1e-9))
        assert np.array_equal((lo, hi), _inverted_by_counting(g, A, 1 - c, m))
        grid = np.linspace(lo[0] - 1, hi[0] + 1, 8001)
        blo, bhi = _brute(g[0], A[0], c, 0.05, grid)
        step = grid[1] - grid[0]
        assert abs(blo - lo[0]) <= step and abs(bhi - hi[0]) <= step


def test_a_label_coefficient_above_one_is_counted_the_long_way():
    rng = np.random.default_rng(4)
    g, A, c = rng.normal(size=1), rng.normal(0.2, 0.3, (1, 199)), rng.uniform(-0.3, 0.7, 199)
    c[:3] = 1.4  # u = 1 - c < 0: the condition turns over for these permutations
    lo, hi = inverted_interval(g, A, c, 0.05)
    grid = np.linspace(lo[0] - 1, hi[0] + 1, 8001)
    blo, bhi = _brute(g[0], A[0], c, 0.05, grid)
    assert abs(blo - lo[0]) <= grid[1] - grid[0] and abs(bhi - hi[0]) <= grid[1] - grid[0]


def test_zero_lies_below_the_interval_exactly_when_the_test_rejects():
    x, _, labels = _design(seed=1)
    rng = np.random.default_rng(2)
    seen = set()
    for shift in (0.0, 0.3, 0.6, 1.0, 1.5):
        for _ in range(8):
            d = labels(rng)
            y = 0.5 * x + shift * d + rng.normal(scale=0.6, size=x.size)
            res = shift_test(_pct(x), _pct(y), d, rng=rng, eps=EPS, n_bins=4, n_perm=199, interval_alpha=0.05)
            rejects = res["p_value"] < 0.05
            assert (res["gamma_lo"] > 0) == rejects
            seen.add(rejects)
    assert seen == {True, False}  # both cases were met


def test_the_interval_covers_its_nominal_level_where_the_test_is_exact():
    """400 data sets at a true shift of 0.4: coverage of the 90% interval within three Monte Carlo standard
    errors of what the +1 convention gives with 199 permutations (each tail 9/200: 91%)."""
    x, strata, labels = _design(seed=5)
    rng = np.random.default_rng(6)
    covered, R, truth = 0, 400, 0.4
    for _ in range(R):
        d = labels(rng).astype(float)
        y = 0.3 + 0.5 * x + truth * d + rng.normal(scale=0.6, size=x.size)
        D = d[stratified_permutation_indices(strata, 199, rng)]
        g = group_shift_batch(x, y, d[None, :])
        lo, hi = inverted_interval(g, group_shift_batch(x, y, D)[None, :], group_shift_batch(x, d, D), 0.05)
        covered += bool(lo[0] <= truth <= hi[0])
    share, se = covered / R, np.sqrt(0.91 * 0.09 / R)
    assert abs(share - 0.91) <= 3 * se, share


# -- the curve under the null -------------------------------------------------------------------------------


def test_null_labels_are_the_tests_own_permutations_of_the_support():
    x, _, labels = _design(seed=7)
    d = labels(np.random.default_rng(8))
    out = null_labels(_pct(x), d, eps=EPS, n_bins=4, n_datasets=30, rng=np.random.default_rng(9))
    mask, _, _ = common_support(clipped_logit(_pct(x), EPS), d)
    strata = stratum_labels(clipped_logit(_pct(x), EPS)[mask], 4)
    for lab in out:
        assert np.array_equal(lab[~mask], d[~mask])  # outside the support, every label is kept
        for s in np.unique(strata):  # inside, each stratum keeps its number of post-release models
            assert lab[mask][strata == s].sum() == d[mask][strata == s].sum()
    assert len({lab.tobytes() for lab in out}) > 25


def test_each_null_data_set_is_tested_as_the_test_itself_does():
    """The matrix form of the null (one residual, permutations by their inverses) gives each data set the test's
    own gamma to rounding, and on the same permutations the test's own p-value."""
    from harness.stats.specification_null import _inverses, _tests

    x, _, labels = _design(seed=14)
    rng = np.random.default_rng(15)
    y = 0.5 * x + 0.3 * labels(rng) + rng.normal(scale=0.6, size=x.size)
    L = np.array([labels(rng) for _ in range(6)])
    for lab in L:
        mask, _, _ = common_support(x, lab)
        strata = stratum_labels(x[mask], 4)
        inv = _inverses(strata, 199, np.random.default_rng(16))
        g, p = _tests(x[mask], y[mask], lab[None, mask].astype(float), inv)
        res = shift_test(_pct(x), _pct(y), lab, rng=np.random.default_rng(16), eps=EPS, n_bins=4, n_perm=199)
        assert g[0] == pytest.approx(res["gamma"], rel=1e-10, abs=1e-12) and p[0] == res["p_value"]


def _curve(x, y, d, specs, rng, R):
    obs = [shift_test(_pct(x), _pct(y), d, rng=rng, eps=EPS, **s) for s in specs]
    null = shift_specification_null(
        _pct(x),
        _pct(y),
        d,
        paper={"eps": EPS, "n_bins": 4},
        specs=[{"eps": EPS, **s} for s in specs],
        n_datasets=R,
        rng=rng,
        alpha=0.05,
    )
    share = sum(o["p_value"] < 0.05 for o in obs) / len(specs)
    median = float(np.median([o["gamma"] for o in obs]))
    shares = null["significant"].sum(axis=1) / len(specs)
    return curve_p_value(share, shares), curve_p_value(median, np.median(null["effect"], axis=1)), null


def test_a_planted_shift_is_beyond_every_null_data_set():
    """Known answer: with a shift of three residual standard deviations every specification is significant and
    the median effect exceeds that of every null data set, so its p-value is 1 / (R + 1). The share of
    significant specifications is at its ceiling (1), which a null data set can reach too (each specification's
    test has size 5% there), so its p-value is one plus those, over R + 1."""
    x, _, labels = _design(seed=10)
    rng = np.random.default_rng(11)
    d = labels(rng)
    y = 0.5 * x + 2.0 * d + rng.normal(scale=0.6, size=x.size)
    specs = [{"n_bins": 2, "n_perm": 199}, {"n_bins": 4, "n_perm": 199}]
    p_share, p_median, null = _curve(x, y, d, specs, rng, 39)
    assert p_median == pytest.approx(1 / 40)
    assert p_share == pytest.approx((1 + null["significant"].all(axis=1).sum()) / 40) and p_share <= 0.2


@pytest.mark.slow
def test_the_curve_under_the_null_rejects_at_its_level_when_nothing_is_there():
    """Known answer: with the label assigned at random within strata and no shift, the median effect's p-value
    is (close to) uniform, so it falls at or below 0.1 in about a tenth of 40 toy data sets."""
    x, _, labels = _design(seed=12)
    rng = np.random.default_rng(13)
    specs = [{"n_bins": 2, "n_perm": 99}, {"n_bins": 4, "n_perm": 99}]
    small = 0
    for _ in range(40):
        d = labels(rng)
        y = 0.5 * x + rng.normal(scale=0.6, size=x.size)
        small += _curve(x, y, d, specs, rng, 19)[1] <= 0.1
    assert small <= 40 * 0.1 + 3 * np.sqrt(40 * 0.1 * 0.9), small


def test_a_curve_p_value_counts_the_null_draws_at_least_as_far():
    assert curve_p_value(5.0, [1.0, 2.0, 3.0]) == 0.25
    assert curve_p_value(0.0, [1.0, 2.0, 3.0]) == 1.0
    assert curve_p_value(2.0, [1.0, 2.0, 3.0]) == 0.75  # a tie counts
