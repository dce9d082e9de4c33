"""Temporal analyses on synthetic periods, and the fit-free Table 2 rows on the real table."""

import json

import numpy as np
import pandas as pd
import pytest
from reference import approx

from harness.stats.estimator_comparison import (
    baseline_comparison,
    estimator_table,
    evaluate_split,
    shuffled_z_advantage,
)
from harness.stats.splits import fit_split_models, rolling_splits
from harness.stats.temporal_coverage import relabelled_coverage, temporal_coverage

pytestmark = pytest.mark.filterwarnings("error")

FAST_SIGMOID = {"n_random": 2, "n_keep": 2}
# The paper's four periods (claims/001 and 003; ../shared/UPSTREAM.md "Claims 001 and 003") and its
# loss settings, passed explicitly: the math package keeps no paper defaults.
PERIODS = (
    ("P1", None, "2024-06"),
    ("P2", "2024-07", "2024-09"),
    ("P3", "2024-10", "2024-12"),
    ("P4", "2025-01", "2025-03"),
)
PAPER = {"periods": PERIODS, "tau": 0.98, "kappa": 50.0}
SIGMOID = {"tau": 0.98, "kappa": 50.0, "lam": 1e-3, **FAST_SIGMOID}


def _synthetic(seed=0, n=240):
    """Four periods; task 'stable' has the same law in each, task 'drift' rises by 0.06 per period."""
    rng = np.random.default_rng(seed)
    rows = []
    for t, label in enumerate(["P1", "P2", "P3", "P4"]):
        z = rng.uniform(0.0, 3.0, n)
        base = 0.2 + 0.4 / (1 + np.exp(-2.0 * (z - 1.5)))
        rows.append(
            pd.DataFrame(
                {
                    "z": z,
                    "stable": np.clip(base + rng.normal(0, 0.04, n), 0, 1),
                    "drift": np.clip(base + 0.06 * t + rng.normal(0, 0.04, n), 0, 1),
                    "period": label,
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def test_rolling_splits_restrict_validation_to_the_overlap():
    two = (("A", None, "2024-06"), ("B", "2024-07", None))  # only labels and order are used
    df = pd.DataFrame(
        {
            "z": [0.0, 1.0, 2.0, 3.0, 0.5, 1.5, 9.0, 2.0, 2.0, 0.2],
            "y": [0.1] * 9 + [np.nan],
            "period": ["A"] * 4 + ["B"] * 6,
        }
    )
    (s,) = rolling_splits(df, ["y"], periods=two)
    # A spans [0, 3]; B's scored rows span [0.5, 9] (the NaN score at 0.2 is dropped first)
    # -> overlap [0.5, 3]: 9.0 is dropped, the end 0.5 and both 2.0 are kept
    assert s.overlap == (0.5, 3.0)
    assert sorted(s.z_val.tolist()) == [0.5, 1.5, 2.0, 2.0]
    assert s.n_val_before_overlap == 5
    assert df["z"].to_numpy()[s.val_rows].tolist() == s.z_val.tolist()  # the rows the validation points came from
    with pytest.raises(ValueError, match="period A has 3"):  # a training period needs at least 4 rows
        rolling_splits(df.assign(period=["A"] * 3 + ["B"] * 7), ["y"], periods=two)


def test_rolling_splits_read_labels_and_scores_as_before():
    two = (("A", None, "2024-06"), ("B", "2024-07", None))
    df = pd.DataFrame(
        {"z": np.arange(10.0), "y": [0.1] * 10, "period": pd.array(["A"] * 5 + ["B"] * 5, dtype="string")}
    )
    # a string column, an object column, and scores as text (read as numbers, the unreadable one missing)
    text = df.assign(y=["0.1"] * 9 + ["n/a"], period=df["period"].astype(object))
    (s,), (t,) = rolling_splits(df, ["y"], periods=two), rolling_splits(text, ["y"], periods=two)
    assert s.z_train.tolist() == t.z_train.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert s.z_val.tolist() == []  # B's z lie past A's: no overlap
    assert t.n_val_before_overlap == 4 and s.n_val_before_overlap == 5
    with pytest.raises(ValueError, match="period C has 0"):  # a label no row has
        rolling_splits(df, ["y"], periods=(("C", None, "2024-06"), ("B", "2024-07", None)))


def test_split_bins_are_shared_only_between_splits_of_the_same_z():
    from harness.stats.estimator_comparison import _shared_bins, split_bins

    df = _synthetic()
    df.loc[df.index[::7], "drift"] = np.nan  # the drift task's splits lose some rows: bins of their own
    splits = rolling_splits(df, {"a": "stable", "b": "drift", "c": "stable"}, periods=PERIODS)
    assert len(splits) == 9
    ev = {"n_bins": 10, "min_bin_size": 30, "closing_group": "next"}
    shared = _shared_bins(splits, ev)
    for s, b in zip(splits, shared):
        assert all(np.array_equal(x, y) for x, y in zip(b, split_bins(s, **ev)))
    assert len({id(b) for b in shared}) == 6  # three pairs x two distinct z sets (a and c share theirs)


def test_temporal_coverage_detects_drift_and_is_json_ready():
    df = _synthetic()
    out = temporal_coverage(
        df,
        {"Stable": "stable", "Drift": "drift"},
        drift_tasks=["Drift"],
        rng=np.random.default_rng(0),
        sigmoid_options=FAST_SIGMOID,
        lam=1e-3,
        n_bins=4,
        min_bin_size=20,
        n_relabellings=2,
        **PAPER,
    )
    json.dumps(out)  # plain Python types only
    st, dr = out["tasks"]["Stable"], out["tasks"]["Drift"]
    # each later period is shifted up by 0.06 (1.5 noise sd): far more than 2% land above the old
    # boundary (about 11% here; the smoothed fit sits ~2.5 sd above the centre, so P(Z > 1) is the scale)
    assert dr["signed_coverage"] < -0.05 and dr["share_above"] > 0.07 and dr["binomial_p"] < 1e-10
    # the same law in every period: out-of-period coverage near tau (binomial sd ~0.009 per split)
    assert abs(st["signed_coverage"]) < 0.03
    # bookkeeping: pooled share = pooled counts, separation = stable - drift
    assert st["share_above"] == st["n_above"] / st["n"]
    g = out["groups"]["signed_coverage"]
    assert g["separation"] == pytest.approx(g["stable"] - g["drift"])
    # relabelling periods at random destroys the drift: separation shrinks towards 0
    assert out["relabelling"]["n"] == 2
    assert abs(out["relabelling"]["separation_mean"]) < g["separation"] / 3


def test_the_clustered_exceedance_test_pools_the_later_models_by_their_cluster():
    df = _synthetic()
    # every tenth row names no base model (a cluster of its own); the others share base models of ten rows
    df["base"] = [None if i % 10 == 0 else f"b{i // 10}" for i in range(len(df))]
    tasks = ["stable", "drift"]
    kw = {"drift_tasks": ["drift"], "sigmoid_options": FAST_SIGMOID, "lam": 1e-3, "n_relabellings": 0, **PAPER}
    out = temporal_coverage(df, tasks, rng=np.random.default_rng(0), cluster_col="base", **kw)
    later = df.loc[df["period"] != "P1", "base"]
    for task in tasks:
        x = out["tasks"][task]
        assert 0.0 <= x["cluster_p"] <= 1.0 and x["design_effect"] > 0
        assert x["n"] / 10 < x["n_clusters"] <= later.isna().sum() + later.nunique()
    # the drift (11% above where 2% are allowed) is clear with clusters of ten too
    assert out["tasks"]["drift"]["cluster_p"] < 1e-6
    alone = temporal_coverage(df.assign(base=None), tasks, rng=np.random.default_rng(0), cluster_col="base", **kw)
    d = alone["tasks"]["drift"]
    assert d["n_clusters"] == d["n"] and d["design_effect"] == pytest.approx(d["n"] / (d["n"] - 1), rel=1e-12)
    assert temporal_coverage(df, tasks, rng=np.random.default_rng(0), **kw)["tasks"]["drift"]["cluster_p"] is None


def test_fits_do_not_depend_on_how_they_are_spread():
    from harness.parallel.fanout import Mapper, executor_from, using

    splits = rolling_splits(_synthetic(1, 120), ["stable"], periods=PERIODS)
    a = fit_split_models(splits, "sigmoid", SIGMOID, rng=np.random.default_rng(3))
    with using(executor_from("local:2")):
        b = fit_split_models(splits, "sigmoid", SIGMOID, rng=np.random.default_rng(3), map_fn=Mapper("fits"))
    # each split gets the same spawned child generator wherever it is fitted
    assert [m.params_ for m in a] == [m.params_ for m in b]


def test_fits_from_given_starts_on_the_same_z_are_fitted_together_as_one_at_a_time():
    from harness.stats.splits import _fit_job, run_fit_jobs

    splits = rolling_splits(_synthetic(1, 120), ["stable", "drift"], periods=PERIODS)
    full = {
        kind: fit_split_models(splits, kind, options, rng=np.random.default_rng(3))
        for kind, options in (("sigmoid", SIGMOID), ("ispline", {"tau": 0.98, "kappa": 50.0, "lam": 1e-4}))
    }
    jobs = []
    for s, sig, isp in zip(splits, full["sigmoid"], full["ispline"]):
        g = np.random.default_rng(4)
        jobs += [
            ("sigmoid", SIGMOID, s.z_train, s.y_train, g, sig.params_),
            ("ispline", {"tau": 0.98, "kappa": 50.0, "lam": 1e-4}, s.z_train, s.y_train, g, isp.params_, None),
            ("sigmoid", SIGMOID, s.z_train, s.y_train, g, sig.params_, np.ones(s.z_train.size)),  # weighted: alone
            ("constant", {"tau": 0.98}, s.z_train, s.y_train, g),
        ]
    for together, job in zip(run_fit_jobs(jobs), jobs):
        alone = _fit_job(job)
        assert type(together) is type(alone)
        for k, v in alone.params_.items():
            np.testing.assert_allclose(together.params_[k], v, rtol=1e-9, atol=1e-12)


def test_baseline_comparison_orderings_on_synthetic_data():
    out = baseline_comparison(
        _synthetic(2),
        ["stable", "drift"],
        rng=np.random.default_rng(0),
        n_bins=4,
        min_bin_size=20,
        sigmoid_options=FAST_SIGMOID,
        lam=1e-3,
        ispline_lam=1e-4,
        ispline_options={"n_random": 1, "n_keep": 2},
        n_shuffles=1,
        **PAPER,
    )
    json.dumps(out)
    assert out["n_pairs"] == 6
    by = {(r["task"], r["t"], r["estimator"]): r for r in out["per_pair"]}
    for task in ("stable", "drift"):
        for t in (1, 2, 3):
            c, lm, bw = (by[(task, t, k)]["pinball_id"] for k in ("constant", "constant_loss_min", "binwise"))
            # the loss-minimising constant minimises the ID loss over constants, so it beats np.quantile,
            # and per-bin optima can only improve on one constant in sample
            assert lm <= c + 1e-15 and bw <= lm + 1e-15
    # the boundary rises with z, so the sigmoid beats the constant in sample by a clear margin,
    # and shuffling z within the training period removes most of that advantage
    sh = out["shuffled_z"]
    assert sh["advantage_real"] > 0 and sh["advantage_shuffled"] < sh["advantage_real"] / 3


def test_fit_free_table2_rows_on_the_real_table(tables):
    from harness.stats.leaderboard import with_log_compute
    from harness.stats.periods import assign_periods

    df = assign_periods(
        with_log_compute(tables.frame("oll"), "Pretraining tokens (T)", "#Params (B)", 6.0),
        date_col="Upload To Hub Date",
        periods=PERIODS,
    )
    tasks = ["IFEval Raw", "BBH Raw", "MATH Lvl 5 Raw", "GPQA Raw", "MUSR Raw", "MMLU-PRO Raw"]
    splits = rolling_splits(df, tasks, periods=PERIODS)
    rng = np.random.default_rng(0)  # unused by these estimators; passed for the uniform signature

    def row(kind, options):
        fits = fit_split_models(splits, kind, options, rng=rng)
        ms = [evaluate_split(s, m, tau=0.98, kappa=50.0) for s, m in zip(splits, fits)]
        return [
            float(np.mean([m[k] for m in ms]))
            for k in ("pinball_id", "pinball_ood", "calibration_id", "calibration_ood")
        ]

    # Table 2 of the paper and the reference report (seeds/003), equal-weight mean over 18 pairs,
    # printed to 5 decimals: tolerance = half a unit in the last printed place.
    assert row("constant", {"tau": 0.98}) == pytest.approx([0.00535, 0.00623, 0.04123, 0.03597], abs=5e-6)
    assert row("binwise", {"tau": 0.98, "kappa": 50.0}) == pytest.approx([0.00401, 0.00500, 0.01665, 0.02807], abs=5e-6)
    # beta = 0 control: the authors' OOD calibration error (tests/results/reference_numbers.yaml)
    assert row("constant_loss_min", {"tau": 0.98, "kappa": 50.0})[3] == approx(
        "estimator_comparison.beta_zero_calibration_ood"
    )


def test_relabelled_coverage_alone_matches_the_bundled_control():
    df = _synthetic(3, 160)
    kw = {
        "drift_tasks": ["Drift"],
        "sigmoid_options": FAST_SIGMOID,
        "n_bins": 4,
        "min_bin_size": 20,
        "lam": 1e-3,
        **PAPER,
    }
    tasks = {"Stable": "stable", "Drift": "drift"}
    alone = relabelled_coverage(df, tasks, rng=np.random.default_rng(5), n_relabellings=2, **kw)
    json.dumps(alone)
    assert alone["n"] == 2 and len(alone["groups"]) == 2
    assert alone["separation_mean"] == pytest.approx(np.mean(alone["separation"]))
    # time no longer separates the tasks once the periods are shuffled
    real = temporal_coverage(df, tasks, rng=np.random.default_rng(5), n_relabellings=0, **kw)
    assert abs(alone["separation_mean"]) < real["groups"]["signed_coverage"]["separation"] / 3
    with pytest.raises(ValueError, match="at least 1"):
        relabelled_coverage(df, tasks, rng=np.random.default_rng(5), n_relabellings=0, **kw)


def test_estimator_table_and_shuffled_advantage_agree_with_baseline_comparison():
    df = _synthetic(4, 120)
    kw = {"n_bins": 4, "min_bin_size": 20, **PAPER}
    full = baseline_comparison(
        df,
        ["stable", "drift"],
        rng=np.random.default_rng(0),
        sigmoid_options=FAST_SIGMOID,
        ispline_options={"n_random": 1, "n_keep": 2},
        n_shuffles=0,
        lam=1e-3,
        ispline_lam=1e-4,
        **kw,
    )
    # deterministic estimators: the one-row table equals the corresponding row of the full table
    options = {
        "constant": {"tau": 0.98},
        "constant_loss_min": {"tau": 0.98, "kappa": 50.0},
        "binwise": {"tau": 0.98, "kappa": 50.0, "n_bins": 4, "min_bin_size": 20},
    }
    for kind, opts in options.items():
        one = estimator_table(df, ["stable", "drift"], kind, opts, rng=np.random.default_rng(1), **kw)
        assert one["table"] == pytest.approx(full["table"][kind]), kind
        assert len(one["per_pair"]) == 6 and len(one["fitted"]) == 6
    sh = shuffled_z_advantage(
        df,
        ["stable", "drift"],
        rng=np.random.default_rng(2),
        n_shuffles=2,
        sigmoid_options=FAST_SIGMOID,
        lam=1e-3,
        **kw,
    )
    json.dumps(sh)
    assert sh["n"] == 2 and sh["advantage_mean"] == pytest.approx(np.mean(sh["advantage_each"]))
    real_adv = full["table"]["constant"]["pinball_id"] - full["table"]["sigmoid"]["pinball_id"]
    assert real_adv > 0 and sh["advantage_mean"] < real_adv / 3


def test_a_narrowed_comparison_fits_only_its_estimators_and_gives_their_numbers():
    # A bootstrap that reads only the sigmoid and the I-spline fits only them; every generator is still spawned,
    # so their numbers are those of the full comparison, to the bit.
    df = _synthetic(6, 120)
    kw = {
        "sigmoid_options": FAST_SIGMOID,
        "ispline_options": {"n_random": 1, "n_keep": 2},
        "n_shuffles": 0,
        "lam": 1e-3,
        "ispline_lam": 1e-4,
        "n_bins": 4,
        "min_bin_size": 20,
        **PAPER,
    }
    full = baseline_comparison(df, ["stable", "drift"], rng=np.random.default_rng(0), **kw)
    narrow = baseline_comparison(
        df, ["stable", "drift"], rng=np.random.default_rng(0), estimators=["sigmoid", "ispline"], **kw
    )
    assert set(narrow["table"]) == {"sigmoid", "ispline"}
    assert narrow["table"] == {k: full["table"][k] for k in ("ispline", "sigmoid")}
    assert narrow["fitted"] == full["fitted"]
    assert {r["estimator"] for r in narrow["per_pair"]} == {"sigmoid", "ispline"}
    assert narrow["shuffled_z"]["advantage_real"] is None
    with pytest.raises(ValueError, match="unknown estimators"):
        baseline_comparison(df, ["stable"], rng=np.random.default_rng(0), estimators=["spline"], **kw)


def test_coverage_without_the_binned_variants_or_the_tests_keeps_every_other_number():
    df = _synthetic(7, 150)
    kw = {"drift_tasks": ["drift"], "sigmoid_options": FAST_SIGMOID, "n_relabellings": 0, "lam": 1e-3, **PAPER}
    full = temporal_coverage(df, ["stable", "drift"], rng=np.random.default_rng(0), **kw)
    bare = temporal_coverage(df, ["stable", "drift"], rng=np.random.default_rng(0), binned=False, tested=False, **kw)
    binned = ("bin_averaged", "bin_averaged_train_bins")
    for a, b in zip(full["splits"], bare["splits"]):
        assert {k: v for k, v in a.items() if k not in binned} == {k: v for k, v in b.items() if k not in binned}
        assert all(b[k] is None for k in binned)
    left_out = (*binned, "binomial_p")
    for task in ("stable", "drift"):
        a, b = full["tasks"][task], bare["tasks"][task]
        assert {k: v for k, v in a.items() if k not in left_out} == {k: v for k, v in b.items() if k not in left_out}
        assert all(b[k] is None for k in left_out) and a["binomial_p"] is not None
    assert bare["groups"]["signed_coverage"] == full["groups"]["signed_coverage"]
    assert bare["groups"]["bin_averaged"] == {"drift": None, "stable": None, "separation": None}
