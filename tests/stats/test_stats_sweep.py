"""Claim 004, part 3: one-at-a-time hyperparameter sweeps (synthetic data, small grids)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.special import expit

from harness.stats.sweep import hyperparameter_sweep

pytestmark = pytest.mark.filterwarnings("error")

CLAIMED = {"tau": 0.9, "kappa": 50.0, "lam": 1e-3}
GRIDS = {"tau": (0.5, 0.9), "lam": (1e-3, 1.0)}
OPTS = {"n_random": 0, "n_keep": 2}  # deterministic grid of starts only: fast


def _data(seed=0, n=600):
    rng = np.random.default_rng(seed)
    out = {}
    for label, (lo, hi, mid) in {"A": (0.1, 0.6, 1.0), "B": (0.2, 0.5, 2.0)}.items():
        z = rng.uniform(-2.0, 4.0, n)
        top = lo + hi * expit(1.5 * (z - mid))
        out[label] = (z, top * rng.uniform(0.3, 1.0, n))
    return out


@pytest.fixture(scope="module")
def sweep():
    return hyperparameter_sweep(
        _data(),
        rng=np.random.default_rng(1),
        reference={"A": 0.5, "B": 0.6},
        claimed=CLAIMED,
        grids=GRIDS,
        z_eval=3.0,
        beta_task="A",
        estimator_options=OPTS,
    )


def test_claimed_fit_is_done_once_and_reused(sweep):
    # Settings: claimed + tau=0.5 + lam=1 (tau=0.9 and lam=1e-3 are the claimed one), x 2 tasks.
    assert sweep["n_fits"] == 3 * 2
    at_claimed = [r for rows in sweep["sweeps"].values() for r in rows if r["value"] == CLAIMED[r["param"]]]
    assert len(at_claimed) == 2
    for r in at_claimed:
        # The same fit: no shift against itself, same boundaries as the claimed summary.
        assert r["max_shift_vs_claimed"] == 0.0
        assert r["boundary"] == sweep["claimed"]["boundary"]


def test_reference_deviation_is_the_largest_absolute_gap(sweep):
    r = sweep["sweeps"]["tau"][0]
    expected = max(abs(r["boundary"]["A"] - 0.5), abs(r["boundary"]["B"] - 0.6))
    assert r["max_dev_reference"] == pytest.approx(expected, abs=0)


def test_coverage_tracks_tau(sweep):
    # A tau-quantile fit leaves about 1 - tau of the points above it; with 600 points
    # per task the sampling sd of a coverage is about 0.02, so 0.05 is generous.
    for r in sweep["sweeps"]["tau"]:
        assert abs(r["coverage_mean"] - r["tau"]) < 0.05
        assert r["coverage_minus_tau"] == pytest.approx(r["coverage_mean"] - r["tau"])


def test_ridge_shrinks_the_slope(sweep):
    lam = {r["value"]: r for r in sweep["sweeps"]["lam"]}
    # The penalty is lam * beta^2: a thousand times more weight gives a smaller slope.
    assert lam[1.0]["beta_of_task"] < 0.5 * lam[1e-3]["beta_of_task"]
    assert lam[1.0]["beta_task"] == "A"


def test_same_seed_same_sweep_and_plain_record(sweep):
    again = hyperparameter_sweep(
        _data(),
        rng=np.random.default_rng(1),
        reference={"A": 0.5, "B": 0.6},
        claimed=CLAIMED,
        grids=GRIDS,
        z_eval=3.0,
        beta_task="A",
        estimator_options=OPTS,
    )
    # Every fit has its own spawned generator: identical numbers on a rerun.
    for p in GRIDS:
        assert [r["boundary"] for r in again["sweeps"][p]] == [r["boundary"] for r in sweep["sweeps"][p]]
    # The record goes into the JSON run record as is.
    json.dumps(sweep, allow_nan=False)


def test_best_of_warm_and_cold_never_has_a_higher_objective():
    kw = dict(claimed=CLAIMED, grids={"tau": (0.5,)}, estimator_options=OPTS, z_eval=3.0, beta_task="A")
    warm = hyperparameter_sweep(_data(), rng=np.random.default_rng(2), starts="warm", **kw)
    best = hyperparameter_sweep(_data(), rng=np.random.default_rng(2), starts="best", **kw)
    # "best" keeps the lower final objective of a warm and a cold solve of each task.
    assert best["n_fits"] == 2 * warm["n_fits"]
    for w, b in zip(warm["sweeps"]["tau"], best["sweeps"]["tau"]):
        for task in w["objective"]:
            assert b["objective"][task] <= w["objective"][task] + 1e-12


def test_bad_arguments_are_errors():
    kw = dict(rng=np.random.default_rng(0), claimed=CLAIMED, z_eval=3.0, beta_task="A")
    with pytest.raises(ValueError, match="reference tasks"):
        hyperparameter_sweep(_data(), reference={"C": 0.1}, grids={}, **kw)
    with pytest.raises(ValueError, match="not hyperparameters"):
        hyperparameter_sweep(_data(), grids={"alpha": (1.0,)}, **kw)
    with pytest.raises(ValueError, match="starts"):
        hyperparameter_sweep(_data(), grids={}, starts="hot", **kw)
    with pytest.raises(ValueError, match="warm_start"):
        hyperparameter_sweep(_data(), grids={}, estimator_options={"warm_start": False}, **kw)
