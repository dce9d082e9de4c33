"""The one-sided decision on an asserted ordering: the rule, its measured error, its power, and single clusters.

The coverage study measures how often a decision calls an ordering supported when its difference is exactly 0
(:func:`harness.stats.calibration.coverage_study`, ``decisions``). These tests hold it to known answers on
designs whose law is known: a mean of independent normal rows (size ``alpha``, power from normal theory), and
a statistic that the resampling biases on purpose (the percentile rule then errs on one side while its
two-sided interval still looks calibrated: the old rule is caught).
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import pytest
from scipy.special import ndtri

from harness.core.decisions import claimed_side, decide, ordering_state, overall_state
from harness.protocols.base import Resampling
from harness.stats.calibration import _Recentred, coverage_study
from harness.stats.influence import influence, without_each
from harness.stats.intervals import basic
from harness.stats.methods import METHODS, Basic, BCa, Percentile, decision_interval, resampling_calls
from harness.stats.resample import BootstrapDraws

ALPHA = 0.05


def _mean(indices, rng, *, y):
    return {"d": float(y[indices].mean())}


def _biased(indices, rng, *, y, lam):
    """A mean plus ``lam`` times the share of distinct rows: each level of resampling repeats rows, so the
    statistic drifts by about ``-0.37 lam`` per level, and the bootstrap reproduces the drift (as an extreme
    quantile's resampled fits drift from the full-sample fit)."""
    return {"d": float(y[indices].mean()) + lam * np.unique(indices).size / indices.size}


def _study(statistic, n, R, *, seed=3, B=200):
    design = Resampling(n, np.arange(n), statistic, "toy rows")
    methods = (Percentile(), Basic(), BCa(n_groups=10, name="bca"))
    return coverage_study(design, seed=seed, n_replicates=R, n_resamples=B, methods=methods, alpha=ALPHA)


# -- the rule on hand-worked cases --------------------------------------------------------------------------------


def test_decide_reads_the_bound_on_the_claimed_side():
    below, above = claimed_side("<"), claimed_side(">=")
    assert (below, above) == (-1, 1)
    assert decide(-0.3, -0.1, below) == "supported"  # U < 0
    assert decide(-0.3, -0.1, above) == "contradicted"
    assert decide(0.1, 0.3, above) == "supported"  # L > 0
    assert decide(0.1, 0.3, below) == "contradicted"
    assert decide(-0.1, 0.2, below) == decide(-0.1, 0.2, above) == "inconclusive"
    assert decide(-0.2, 0.0, below) == "inconclusive"  # a bound at 0 does not exclude it
    assert decide(math.nan, 0.2, below) is None
    with pytest.raises(ValueError, match="not an ordering"):
        claimed_side("~")


def test_the_basic_interval_reflects_the_percentile_one_about_the_estimate():
    draws = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    iv = basic(draws, 3.0, level=0.5)
    # percentile [1, 3] (type-7 quantiles at 0.25 and 0.75), reflected about 3: [2*3 - 3, 2*3 - 1]
    assert (iv.lo, iv.hi) == (3.0, 5.0)
    assert basic([np.nan], 1.0).info["why"] and not basic([np.nan], 1.0).ok


def test_the_decision_is_the_equal_tailed_interval_at_twice_the_level():
    draws = BootstrapDraws(("d",), np.linspace(-1.0, 1.0, 201)[:, None], np.arange(201), 201, 201, 201, 0)
    res = {("bootstrap",): draws}
    iv = decision_interval(Percentile(), "d", 0.0, res, 201, 0.05)
    assert (iv.lo, iv.hi) == pytest.approx((-0.9, 0.9))  # the 5% and 95% quantiles
    with pytest.raises(ValueError):
        decision_interval(Percentile(), "d", 0.0, res, 201, 0.5)


@pytest.mark.parametrize("name", ["percentile", "basic", "bca"])
def test_the_null_world_moves_every_bound_with_the_truth(name):
    """Every method here moves with its draws, so the bound read in the null world is the bound less the
    truth: the null-world rate of "supported" is the one-sided miss rate on that side."""
    rng = np.random.default_rng(0)
    v = rng.gamma(2.0, size=(300, 1))
    boot = BootstrapDraws(("d",), v, np.arange(300), 300, 40, 40, 0)
    jack = BootstrapDraws(("d",), rng.gamma(2.0, size=(20, 1)), np.arange(20), 20, 40, 40, 0)
    res = {("bootstrap",): boot, ("jackknife", 20): jack}
    m = METHODS[name]
    est, truth = 2.1, 1.7
    real = decision_interval(m, "d", est, res, 40, ALPHA)
    null = decision_interval(m, "d", est - truth, {k: _Recentred(r, {"d": truth}) for k, r in res.items()}, 40, ALPHA)
    assert (null.lo, null.hi) == pytest.approx((real.lo - truth, real.hi - truth), abs=1e-12)


def test_an_ordering_state_is_gated_by_its_measured_error_and_by_single_clusters():
    lim = 0.075  # the error bounds below are the studies' upper confidence bounds
    assert ordering_state("supported", 0.05, 0.05, lim, carried=False) == "supported"
    assert ordering_state("supported", 0.12, 0.05, lim, carried=False) == "not assessed"  # the rule errs
    assert ordering_state("inconclusive", 0.12, 0.05, lim, carried=False) == "not assessed"
    assert ordering_state("supported", None, None, None, carried=False) == "not assessed"  # no study
    assert ordering_state("contradicted", 0.05, 0.20, lim, carried=False) == "not assessed"  # its own side errs
    assert ordering_state("contradicted", 0.05, 0.05, lim, carried=False) == "contradicted"
    assert ordering_state("supported", 0.05, 0.05, lim, carried=True) == "inconclusive"  # one cluster carries it
    assert ordering_state(None, 0.05, 0.05, lim, carried=False) == "not assessed"
    assert ordering_state("supported", 0.05, 0.05, lim, carried=False, dominated=True) == "not assessed"
    assert ordering_state("inconclusive", 0.05, 0.05, lim, carried=False, dominated=True) == "not assessed"
    assert overall_state(["supported", "supported"]) == "supported"
    assert overall_state(["supported", "inconclusive"]) == "mixed"


def test_a_method_says_what_it_costs_and_how_it_is_named():
    for name, m in METHODS.items():
        assert m.name == name and m.words and m.colour.startswith("#")
    assert resampling_calls(METHODS["percentile"].needs(231), 200) == 200
    assert resampling_calls(METHODS["bca"].needs(231), 200) == 220  # the bootstrap and a 20-group jackknife
    assert resampling_calls(METHODS["subsampling"].needs(231), 200) == 200


# -- the study's measured error and power, against known answers --------------------------------------------------


@pytest.fixture(scope="module")
def null_mean():
    """A mean of 100 independent normal rows: every method's one-sided decision has size ``alpha`` (up to its
    first-order error) and power from normal theory."""
    y = np.random.default_rng(1).normal(size=100)
    return y, _study(partial(_mean, y=y), 100, R=400)


@pytest.mark.parametrize("name", ["percentile", "basic", "bca"])
def test_on_a_mean_each_decision_errs_at_its_nominal_level(null_mean, name):
    _, out = null_mean
    d = out["decisions"]["d"][name]
    se = math.sqrt(ALPHA * (1 - ALPHA) / 400)
    assert d["limit"] == pytest.approx(1.5 * ALPHA)
    for side in ("below", "above"):  # each within three Monte Carlo standard errors of alpha
        assert abs(d[f"supports_{side}"] - ALPHA) <= 3 * se, (side, d)
        assert d[f"supports_{side}_mc_se"] == pytest.approx(
            math.sqrt(d[f"supports_{side}"] * (1 - d[f"supports_{side}"]) / 400)
        )


def test_on_a_mean_the_detectable_difference_is_what_normal_theory_says(null_mean):
    """A one-sided 5% test of a mean detects a shift of (z_0.95 + z_0.8) sigma / sqrt(n) in 80% of samples;
    in the empirical world sigma is the rows' own (population) standard deviation."""
    y, out = null_mean
    want = (ndtri(0.95) + ndtri(0.8)) * y.std() / math.sqrt(y.size)
    for name in ("percentile", "basic"):
        d = out["decisions"]["d"][name]
        for side in ("below", "above"):
            assert d[f"detectable_{side}"] == pytest.approx(want, rel=0.15), (name, side)


def test_a_rule_whose_two_sided_interval_looks_calibrated_but_errs_one_sided_is_caught():
    """The old rule trusted a one-sided share of resamples because the two-sided 95% percentile interval
    covered within [90%, 99%]. Here the resampling drifts the statistic (as for an extreme quantile): the
    percentile interval still covers about 90%, all its misses on one side, and its one-sided decision calls
    a null ordering supported far more often than 5%. The study says so; the basic bound corrects the drift."""
    y = np.random.default_rng(1).normal(size=100)
    out = _study(partial(_biased, y=y, lam=0.08), 100, R=200)
    pct, bas = out["decisions"]["d"]["percentile"], out["decisions"]["d"]["basic"]
    cover = out["coverage"]["d"]["percentile"]
    assert 0.90 <= cover["coverage"] <= 0.99 and cover["miss_below"] < cover["miss_above"]  # looks calibrated
    assert pct["supports_below_bounds"][0] > pct["limit"]  # but a claim "below" is falsely supported too often
    assert bas["supports_below"] <= bas["limit"] and bas["supports_above"] <= bas["limit"]


# -- single clusters that carry a result ------------------------------------------------------------------------


def _mean_by_row(indices, rng, *, y):
    return {"d": float(y[indices].mean())}


def test_a_cluster_that_carries_the_statistic_is_named_and_caps_the_decision():
    """Twenty clusters of five rows around 0, and one of fifty rows at 1: the mean (about 0.33) is carried by
    that cluster. Deleting it moves the mean by about -0.33, more than the margin of any decision on the sign;
    deleting any other moves it by about a hundredth."""
    rng = np.random.default_rng(5)
    y = np.concatenate([rng.normal(0.0, 0.1, size=100), np.full(50, 1.0)])
    ids = np.concatenate([np.repeat(np.arange(20), 5), np.full(50, 20)])
    estimate = float(y.mean())
    deleted = without_each(partial(_mean_by_row, y=y), y.size, ids, range(21), seed=1)
    margin = 0.5 * estimate  # a bound half-way between 0 and the estimate
    out = influence(deleted.column("d"), estimate, margin, k=3)
    assert out["top"][0][0] == 20 and out["top"][0][1] == pytest.approx(float(y[:100].mean()) - estimate)
    assert out["beyond_margin"] is True and out["n_beyond"] == 1
    assert all(abs(delta) < 0.02 for _, delta in out["top"][1:])  # 5 rows of 150: about 0.011
    assert ordering_state("supported", 0.04, 0.04, 0.08, carried=out["beyond_margin"]) == "inconclusive"
    # it carries the variance too: 1 - 1/21 of it would be an even spread's whole; here it is nearly all
    assert out["dominant"][0] == 20 and out["dominant"][1] > 0.9
    # a decision whose bound lies above 0 is undone by a move down, which deleting it is (-0.33) ...
    assert influence(deleted.column("d"), estimate, margin, against=-1)["beyond_margin"] is True
    # ... but one whose bound lies below 0 is only pushed further from 0 by that move
    assert influence(deleted.column("d"), estimate, margin, against=+1)["beyond_margin"] is False
    # the same mean spread over the twenty small clusters: none carries it
    flat = y[:100] + estimate
    alone = without_each(partial(_mean_by_row, y=flat), 100, ids[:100], range(20), seed=1)
    quiet = influence(alone.column("d"), float(flat.mean()), 0.5 * float(flat.mean()))
    assert quiet["beyond_margin"] is False and quiet["n_beyond"] == 0
    assert quiet["dominant"][1] < 0.5


def test_the_error_bounds_are_clopper_pearson_and_widen_with_the_looks():
    """Against the exact binomial: the upper bound u of k in n is where P(X <= k | u) = 5%."""
    from scipy.stats import binom

    from harness.stats.calibration import error_bounds

    lo, hi = error_bounds(30, 600)
    assert binom.cdf(30, 600, hi) == pytest.approx(0.05, abs=1e-9)
    assert binom.sf(29, 600, lo) == pytest.approx(0.05, abs=1e-9)
    assert hi < 0.075  # 5% measured on 600 data sets is shown to be at most 7.5%
    assert error_bounds(10, 100)[1] > 0.075  # the same rate on 100 is not
    assert error_bounds(30, 600, looks=8)[1] > hi  # Bonferroni over looks
    assert error_bounds(0, 50)[0] == 0.0 and error_bounds(50, 50)[1] == 1.0


def test_a_sequential_study_stops_once_settled_and_its_data_sets_are_those_of_the_fixed_one():
    from harness.stats.calibration import settled

    y = np.random.default_rng(1).normal(size=100)
    design = Resampling(100, np.arange(100), partial(_mean, y=y), "toy rows")
    run = partial(coverage_study, design, seed=7, n_replicates=90, n_resamples=60, methods=[Basic()], alpha=ALPHA)
    looked = []

    def stop(reps, looks):
        looked.append((len(reps), looks))
        seen[:] = reps
        return len(reps) >= 60

    seen = []
    seq, fixed = run(batch=30, stop=stop), run()
    assert looked == [(30, 3), (60, 3)] and (seq["n_replicates"], seq["max_replicates"]) == (60, 90)
    assert seq["replicates"] == fixed["replicates"][:60]  # the same data sets, whatever the stop
    assert seq["design"]["truth"] == fixed["design"]["truth"]
    # a decision erring near 5% is not settled on 30 data sets; one that never errs is, once 0 of n bounds it
    assert not settled(seen[:30], ["d"], [-1], "basic", ALPHA, 3)
    never = [{"intervals": {"d": {"basic": {"null_bounds": [-1.0, 1.0]}}}}] * 90
    assert not settled(never[:30], ["d"], [-1], "basic", ALPHA, 3) and settled(never, ["d"], [-1], "basic", ALPHA, 3)


def test_only_the_claimed_decision_holds_a_sequential_study():
    from harness.stats.calibration import settled

    # "below" never fires; "above" fires in 7 of 100 data sets, its bound straddling the 7.5% limit
    reps = [{"intervals": {"d": {"basic": {"null_bounds": [0.5, 1.0] if i < 7 else [-1.0, 1.0]}}}} for i in range(100)]
    reps *= 3
    assert settled(reps, ["d"], [-1], "basic", ALPHA, 3)  # the claim puts d below 0: its decision is settled
    assert not settled(reps, ["d"], [1], "basic", ALPHA, 3)  # the claim puts d above 0: not yet
