"""Coverage study engine: known answers on synthetic designs, failure accounting, determinism."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import partial

import numpy as np
import pytest
from scipy import stats

from harness.protocols.base import Resampling
from harness.stats.calibration import (
    DEFAULT_METHODS,
    WORLD,
    coverage_study,
    coverage_table,
    ideal_percentile_coverage,
    map_tasks,
    study_json,
)
from harness.stats.intervals import Interval
from harness.stats.methods import BCa, Percentile, Subsampling
from harness.stats.resample import cluster_ids_from_labels

pytestmark = pytest.mark.filterwarnings("error")


def _stats(indices, rng, *, y):
    """A mean and a median of the rows (module level: picklable for worker processes)."""
    v = y[indices]
    return {"mean": float(v.mean()), "median": float(np.median(v))}


def _flaky(indices, rng, *, y, p):
    """The mean, but one call in ``1/p`` raises (as a fit that fails)."""
    if rng.random() < p:
        raise ValueError("no fit")
    return {"mean": float(y[indices].mean())}


def _design(n_clusters: int, seed: int = 0, statistic=_stats, **kw) -> Resampling:
    """Clusters of 1-4 rows with a shared effect (rows of a cluster are dependent) and skewed noise."""
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(n_clusters), rng.integers(1, 5, n_clusters)).astype(object)
    y = rng.normal(size=n_clusters)[labels.astype(int)] + rng.exponential(size=labels.size)
    labels[::7] = None  # rows without a label are clusters of their own
    return Resampling(labels.size, labels, partial(statistic, y=y, **kw), "synthetic rows")


@dataclass(frozen=True)
class HalfWidth(Percentile):
    """A deliberately wrong method: the percentile interval shrunk to half its width about the estimate."""

    name: str = "half_width"

    def interval(self, quantity, estimate, resamples, n_clusters, level):
        iv = super().interval(quantity, estimate, resamples, n_clusters, level)
        return Interval(
            estimate - (estimate - iv.lo) / 2, estimate + (iv.hi - estimate) / 2, level, self.name, iv.n_used, 0
        )


@dataclass(frozen=True)
class AlwaysAbove(Percentile):
    """An interval that always lies above the truth by construction."""

    name: str = "always_above"

    def interval(self, quantity, estimate, resamples, n_clusters, level):
        return Interval(1e6, 1e6 + 1, level, self.name, 1, 0)


def _nominal_se(r: int, level: float = 0.95) -> float:
    return math.sqrt(level * (1 - level) / r)


# -- known answers ---------------------------------------------------------------------------------------------


def _mean_only(indices, rng, *, y):
    return {"mean": float(y[indices].mean())}


@dataclass(frozen=True)
class JackknifeNormal(Percentile):
    """``estimate +- z sqrt(v_J)``, ``v_J = (G - 1)/G sum (theta_(k) - mean)^2`` (delete-one cluster jackknife).

    For a mean of many clusters this is the cluster-robust normal interval: known to cover ~0.95, with no
    resampling noise in its endpoints (the jackknife is deterministic).
    """

    name: str = "jackknife_normal"
    shrink: float = 1.0

    def needs(self, n_clusters):
        return (("jackknife", n_clusters),)

    def interval(self, quantity, estimate, resamples, n_clusters, level):
        v = resamples[("jackknife", n_clusters)].column(quantity)
        half = (
            self.shrink
            * stats.norm.ppf(0.5 + level / 2)
            * math.sqrt((v.size - 1) / v.size * np.sum((v - v.mean()) ** 2))
        )
        return Interval(estimate - half, estimate + half, level, self.name, v.size, 0)


R_FINE = 200  # Monte Carlo s.e. of a 0.95 coverage: 0.015; the tolerances are 3 of them
#: The coverage of an *ideal* percentile interval (a normal statistic, draws from the true law about the
#: estimate) read from B = 100 draws with numpy's "linear" quantiles: 0.934 (simulated, 40000 replicates, s.e.
#: 0.001; 0.941 at B = 200, 0.947 at B = 1000). The type-7 quantile of 100 draws at 0.025 sits between the 3rd and
#: 4th order statistics, inside the true quantile, and its noise adds to the interval's: both cost coverage.
IDEAL_B100 = 0.934


def _fine(methods, seed=1, n_resamples=100):
    out = coverage_study(
        _design(100, statistic=_mean_only), seed=seed, n_replicates=R_FINE, n_resamples=n_resamples, methods=methods
    )
    return out, out["coverage"]["mean"]


def test_the_finite_b_reference_is_the_simulated_ideal_coverage():
    ref = ideal_percentile_coverage(100)
    assert ref == ideal_percentile_coverage(100)  # deterministic
    assert abs(ref["coverage"] - IDEAL_B100) <= 3 * ref["mc_se"] + 0.001
    assert ideal_percentile_coverage(1000, n_sim=4000)["coverage"] > ref["coverage"]


def test_a_method_known_to_be_fine_covers_the_mean_within_mc_error_and_half_width_is_caught():
    _, cov = _fine((JackknifeNormal(), JackknifeNormal(name="half_width", shrink=0.5)))
    assert abs(cov["jackknife_normal"]["coverage"] - 0.95) <= 3 * _nominal_se(R_FINE), cov["jackknife_normal"]
    bad = cov["half_width"]
    # half the width covers about P(|Z| < 0.98) = 0.67: under-covering far beyond Monte Carlo error
    assert bad["coverage"] + 3 * bad["mc_se"] < 0.95
    assert bad["mean_width"] == pytest.approx(cov["jackknife_normal"]["mean_width"] / 2, rel=1e-9)


def test_percentile_covers_the_mean_as_an_ideal_percentile_interval_of_b_draws_does():
    out, cov = _fine((Percentile(), HalfWidth()))
    assert abs(cov["percentile"]["coverage"] - IDEAL_B100) <= 3 * _nominal_se(R_FINE, IDEAL_B100), cov["percentile"]
    assert cov["half_width"]["coverage"] + 3 * cov["half_width"]["mc_se"] < IDEAL_B100
    assert out["statistic_calls"]["per_replicate"] == 1 + 100  # the two methods share one bootstrap


def test_bca_and_subsampling_cover_the_mean_as_an_ideal_interval_of_b_draws_does():
    out, cov = _fine((BCa(n_groups=10, name="bca10"), Subsampling(), Subsampling(fpc=False, name="nofpc")))
    for m in ("bca10", "subsampling"):
        assert abs(cov[m]["coverage"] - IDEAL_B100) <= 3 * _nominal_se(R_FINE, IDEAL_B100), (m, cov[m])
    assert abs(cov["bca10"]["mean_acceleration"]) < 0.1
    # same subsamples, the uncorrected scale is narrower by sqrt(1 - m/G)
    G, m = out["design"]["n_clusters"], out["methods"]["subsampling"]["m"]
    assert cov["nofpc"]["mean_width"] == pytest.approx(cov["subsampling"]["mean_width"] * math.sqrt(1 - m / G))
    assert cov["nofpc"]["coverage"] <= cov["subsampling"]["coverage"]
    assert out["statistic_calls"]["per_replicate"] == 1 + 100 + 10 + 100


def _median_only(indices, rng, *, y):
    return {"median": float(np.median(y[indices]))}


def test_a_central_quantile_with_many_points_is_covered_by_the_percentile_interval():
    out = coverage_study(
        _design(150, seed=3, statistic=_median_only),
        seed=2,
        n_replicates=R_FINE,
        n_resamples=100,
        methods=(Percentile(),),
    )
    s = out["coverage"]["median"]["percentile"]
    assert abs(s["coverage"] - IDEAL_B100) <= 3 * _nominal_se(R_FINE, IDEAL_B100), s


def test_misses_are_told_apart_by_side_and_the_truth_is_the_full_data_statistic():
    res = _design(20)
    out = coverage_study(res, seed=0, n_replicates=5, n_resamples=10, methods=(AlwaysAbove(),))
    s = out["coverage"]["mean"]["always_above"]
    assert s["coverage"] == 0.0 and s["miss_below"] == 1.0 and s["miss_above"] == 0.0 and s["mc_se"] == 0.0
    assert s["estimate_outside"] == 1.0
    full = res.statistic(np.arange(res.n_rows), np.random.default_rng(0))
    assert out["design"]["truth"] == full and out["design"]["quantities"] == ["mean", "median"]
    assert out["design"]["n_clusters"] == int(cluster_ids_from_labels(res.cluster_labels).max()) + 1


def test_failures_are_counted_and_a_failed_estimate_is_a_replicate_without_interval():
    out = coverage_study(
        _design(30, statistic=_flaky, p=0.1),
        seed=4,
        n_replicates=20,
        n_resamples=20,
        methods=(Percentile(), BCa(n_groups=5, name="bca5")),
    )
    s = out["coverage"]["mean"]["percentile"]
    n_failed_estimates = sum(
        r["estimate"]["mean"] is None or math.isnan(r["estimate"]["mean"]) for r in out["replicates"]
    )
    assert n_failed_estimates > 0 and s["n_no_interval"] == n_failed_estimates
    assert s["failed_draws"] > 0 and out["statistic_calls"]["raised"] >= s["failed_draws"]
    assert s["coverage"] == s["n_covered"] / 20 and s["n_covered"] <= 20 - n_failed_estimates


# -- output, seeds, determinism --------------------------------------------------------------------------------

SMALL = {"n_replicates": 6, "n_resamples": 12}
METHODS = (Percentile(), BCa(), BCa(n_groups=4, name="bca4"), Subsampling(), Subsampling(fpc=False, name="sub_nofpc"))


def test_same_seed_gives_byte_identical_json_and_another_seed_does_not():
    a = study_json(coverage_study(_design(15), seed=7, methods=METHODS, **SMALL))
    b = study_json(coverage_study(_design(15), seed=7, methods=METHODS, **SMALL))
    c = study_json(coverage_study(_design(15), seed=8, methods=METHODS, **SMALL))
    assert a == b and a != c
    assert json.loads(a)["n_replicates"] == 6


def test_one_process_and_two_give_the_same_json():
    from harness.parallel.fanout import Mapper, executor_from, using

    serial = study_json(coverage_study(_design(15), seed=5, methods=METHODS, **SMALL))
    with using(executor_from("local:2")):
        pooled = study_json(coverage_study(_design(15), seed=5, methods=METHODS, map_fn=Mapper("data sets"), **SMALL))
    assert serial == pooled


def test_the_output_says_what_it_used():
    out = json.loads(study_json(coverage_study(_design(40), seed=0, **SMALL)))
    assert out["world"] == WORLD and "full real-data optimum" in out["warm_start"]
    assert set(out["methods"]) == {m.name for m in DEFAULT_METHODS}
    sub = out["methods"]["subsampling"]
    G = out["design"]["n_clusters"]
    assert sub["m"] == math.ceil(G ** (2 / 3)) and "G**(2/3)" in sub["m_rule"] and sub["fpc"] is True
    assert sub["scale"] == pytest.approx(math.sqrt(sub["m"] / (G - sub["m"])))
    assert out["methods"]["bca"]["n_groups"] == G and out["methods"]["bca_grouped20"]["n_groups"] == 20
    assert "spawn(R)" in out["seeding"] and out["seed"] == 0
    cov = out["coverage"]["median"]["bca"]
    assert {"coverage", "mc_se", "miss_below", "miss_above", "mean_width", "mean_z0", "mean_acceleration"} <= set(cov)
    assert len(out["replicates"]) == 6 and "coverage" in coverage_table(out)
    assert out["reference"]["ideal_percentile_at_B"]["coverage"] < 0.95  # B = 12: far below


def test_quantities_are_restricted_and_unknown_ones_refused():
    out = coverage_study(_design(15), seed=0, quantities=["median"], methods=(Percentile(),), **SMALL)
    assert list(out["coverage"]) == ["median"] and list(out["replicates"][0]["estimate"]) == ["median"]
    with pytest.raises(KeyError, match="gives no"):
        coverage_study(_design(15), seed=0, quantities=["mode"], **SMALL)
    with pytest.raises(ValueError, match="distinct"):
        coverage_study(_design(15), seed=0, methods=(Percentile(), Percentile()), **SMALL)


def test_map_tasks_keeps_task_order_serial_and_pooled():
    done = []
    assert map_tasks(math.sqrt, [9.0, 4.0, 1.0], on_result=lambda i, n: done.append((i, n))) == [3.0, 2.0, 1.0]
    assert done == [(1, 3), (2, 3), (3, 3)]
    assert map_tasks(math.sqrt, [16.0, 4.0, 1.0, 0.0], lambda fn, xs: [fn(x) for x in reversed(xs)][::-1]) == [
        4.0,
        2.0,
        1.0,
        0.0,
    ]


def _started(indices, rng, *, y, start):
    """The mean, and the start the statistic was given (as a warm-started fit would carry it)."""
    return {"mean": float(y[indices].mean()), "start": float(start)}


def _rebased(indices, rng, *, y, start):
    """The values on these rows, and the statistic started from their mean."""
    values = _started(indices, rng, y=y, start=start)
    return values, partial(_started, y=y, start=values["mean"])


def test_a_rebased_design_starts_each_data_sets_resamples_from_its_own_estimate():
    d = _design(30, seed=8, statistic=_started, start=-1.0)
    y = d.statistic.keywords["y"]
    plain = coverage_study(d, seed=2, n_replicates=6, n_resamples=20, methods=[Percentile(), BCa(n_groups=5)])
    d.rebase = partial(_rebased, y=y, start=-1.0)
    based = coverage_study(d, seed=2, n_replicates=6, n_resamples=20, methods=[Percentile(), BCa(n_groups=5)])
    # the estimate on each data set starts from the truth's start; its resamples from the data set's mean
    for p, r in zip(plain["replicates"], based["replicates"]):
        assert r["estimate"] == p["estimate"] and r["estimate"]["start"] == -1.0
        m = r["estimate"]["mean"]
        assert r["intervals"]["start"]["percentile"] == [m, m] and p["intervals"]["start"]["percentile"] == [-1, -1]
        assert r["intervals"]["mean"] == p["intervals"]["mean"]  # the mean does not depend on its start
    assert based["warm_start"] != plain["warm_start"] and "own estimate" in based["warm_start"]
