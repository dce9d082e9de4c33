"""Time the hot paths of the re-implementation and print medians.

Usage: ``python -m benchmarks [--repeats N] [--only NAME ...]``. Each case
runs once to warm up, then ``N`` times; the table gives the median and the
spread (min-max) in milliseconds. BLAS is limited to one thread, as in the CLI.
The side-by-side comparisons of :mod:`benchmarks.fits` (``fit-vs-authors``,
``fit-from-optimum``) follow the table and print their own lines. ``--only``
keeps the cases and comparisons whose name contains one of the words.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
import scipy.optimize  # noqa: F401  (load BLAS before limiting it)
from threadpoolctl import threadpool_limits

from harness.claimfiles.spec import load_claim
from harness.core.datalock import Tables, load_lock, resolve_data_root
from harness.stats.leaderboard import task_arrays, with_log_compute
from harness.stats.sigmoid import SigmoidQuantileRegressor, _Problem

from .build import build_times, cold_build, warm_build
from .fanout import bootstrap_side_by_side, build_side_by_side
from .fits import COMPARISONS as FIT_COMPARISONS
from .multiverse import multiverse_side_by_side

COMPARISONS = {
    **FIT_COMPARISONS,
    "build": build_times,
    "warm-build": warm_build,
    "cold-build": cold_build,
    "fanout-bootstrap": bootstrap_side_by_side,
    "fanout-build": build_side_by_side,
    "multiverse": multiverse_side_by_side,
}
#: Comparisons that take minutes: run only when named with --only.
SLOW = ("build", "warm-build", "cold-build", "fanout-build", "multiverse")

CASES = {}


def case(name):
    def deco(fn):
        CASES[name] = fn
        return fn

    return deco


def _oll(tables):
    return with_log_compute(tables.frame("oll"), "Pretraining tokens (T)", "#Params (B)", 6.0)


@case("objective+gradient+Hessian, 3663 points")
def _objective(tables):
    z, y = task_arrays(_oll(tables), "MUSR Raw")
    prob = _Problem(z, y, 0.98, 50.0, 1e-3)
    x = np.array([0.05, 0.95, 0.0, 0.4])
    return lambda: prob.value_grad_hess(x)


@case("sigmoid fit (warm-up), MUSR")
def _fit(tables):
    z, y = task_arrays(_oll(tables), "MUSR Raw")
    return lambda: SigmoidQuantileRegressor(tau=0.98, kappa=50.0, lam=1e-3, rng=np.random.default_rng(0)).fit(z, y)


@case("sigmoid fit (cold), MUSR")
def _fit_cold(tables):
    z, y = task_arrays(_oll(tables), "MUSR Raw")
    return lambda: SigmoidQuantileRegressor(
        tau=0.98, kappa=50.0, lam=1e-3, rng=np.random.default_rng(0), warm_start=False
    ).fit(z, y)


def _ispline_split(tables):
    """Claim 003's settings and its GPQA training set of rolling pair 2."""
    from harness.core.paths import PROJECT_ROOT
    from harness.protocols.estimator_comparison.protocol import period_frame
    from harness.stats.splits import rolling_splits

    p = load_claim(PROJECT_ROOT / "claims" / "003_sigmoid_vs_baselines.yaml", tables=tables).params
    splits = rolling_splits(period_frame(tables, p), dict(p.tasks), period_col="period", periods=p.periods)
    split = next(s for s in splits if (s.task, s.t) == ("GPQA", 2))
    options = {"tau": p.tau, "kappa": p.kappa, "lam": p.ispline_lam, "n_intervals": p.ispline_intervals}
    return options, split.z_train, split.y_train


@case("I-spline fit (multi-start), claim 003's GPQA pair 2")
def _ispline_fit(tables):
    from harness.stats.ispline import ISplineQuantileRegressor

    options, z, y = _ispline_split(tables)
    return lambda: ISplineQuantileRegressor(rng=np.random.default_rng(0), **options).fit(z, y)


@case("I-spline fit from the optimum, a resample of claim 003's GPQA pair 2")
def _ispline_init(tables):
    from harness.stats.ispline import ISplineQuantileRegressor

    options, z, y = _ispline_split(tables)
    full = ISplineQuantileRegressor(rng=np.random.default_rng(0), **options).fit(z, y).params_
    i = np.random.default_rng(1).integers(0, z.size, z.size)
    return lambda: ISplineQuantileRegressor(**options).fit(z[i], y[i], init=full)


def _claim_case(claim_file):
    def make(tables):
        from harness.core.paths import PROJECT_ROOT

        spec = load_claim(PROJECT_ROOT / "claims" / claim_file)
        return lambda: spec.protocol.measure(spec.params, tables, np.random.default_rng(spec.seed))

    return make


@case("stratified permutation test, 2000 permutations (claim 000 data)")
def _perm(tables):
    from harness.stats.shift import merge_aa_exports, shift_test

    m = merge_aa_exports(tables.frame("aa_math500"), tables.frame("aa_aime2025"), cutoff="2025-02-06")
    x, y, post = m["math_500_pct"].to_numpy(float), m["aime_2025_pct"].to_numpy(float), m["post"].to_numpy(bool)
    return lambda: shift_test(x, y, post, rng=np.random.default_rng(0), eps=1e-6, n_bins=10, n_perm=2000)


@case("stratified permutation test, 2000 permutations, with its inverted interval for gamma (claim 000 data)")
def _perm_interval(tables):
    from harness.stats.shift import merge_aa_exports, shift_test

    m = merge_aa_exports(tables.frame("aa_math500"), tables.frame("aa_aime2025"), cutoff="2025-02-06")
    x, y, post = m["math_500_pct"].to_numpy(float), m["aime_2025_pct"].to_numpy(float), m["post"].to_numpy(bool)
    return lambda: shift_test(
        x, y, post, rng=np.random.default_rng(0), eps=1e-6, n_bins=10, n_perm=2000, interval_alpha=0.05
    )


@case("multiverse: claim 000's curve under the null, 200 data sets x its specifications, serial")
def _joint_null(tables):
    from harness.claimfiles.multiverse_spec import multiverse_grid
    from harness.claimfiles.spec import specification_params
    from harness.core.paths import PROJECT_ROOT
    from harness.protocols.shift_test.protocol import ShiftParams

    spec = load_claim(PROJECT_ROOT / "claims" / "000_aime2025_shift_test.yaml", tables=tables)
    mv, base = spec.claim.multiverse, spec.params.model_dump(mode="json")
    grid = multiverse_grid({k: [a.value for a in v] for k, v in mv.choices.items()}, mv.exclude)
    specs = [ShiftParams(**specification_params(spec.protocol, base, c)) for c in grid]
    n = mv.joint_null.n_datasets if mv.joint_null else 200
    return lambda: spec.protocol.joint_null(spec.params, specs, tables, np.random.default_rng(0), n)


@case("cluster bootstrap by base model, 1000 resamples of the OLL rows (mean of one task)")
def _cluster_bootstrap(tables):
    from harness.stats.resample import cluster_bootstrap, cluster_ids_from_labels

    df = _oll(tables)
    y = df["MATH Lvl 5 Raw"].to_numpy(float)
    ids = cluster_ids_from_labels(df["Identified base model"])
    return lambda: cluster_bootstrap(
        lambda idx: {"mean": float(y[idx].mean())}, y.size, ids, n_resamples=1000, rng=np.random.default_rng(0)
    )


@case("shift-test power curve, 11 shifts x 200 replicates x 2000 perms (claim 000 data)")
def _power(tables):
    from harness.stats.power import shift_test_power
    from harness.stats.shift import merge_aa_exports

    m = merge_aa_exports(tables.frame("aa_math500"), tables.frame("aa_aime2025"), cutoff="2025-02-06")
    x, y, post = m["math_500_pct"].to_numpy(float), m["aime_2025_pct"].to_numpy(float), m["post"].to_numpy(bool)
    shifts = np.linspace(0.0, 2.5, 11)
    return lambda: shift_test_power(
        x,
        y,
        post,
        shifts=shifts,
        rng=np.random.default_rng(0),
        n_replicates=200,
        eps=1e-6,
        n_bins=10,
        n_perm=2000,
        alpha=0.05,
        target=0.8,
    )


for _name, _file in [
    ("claim 000 measure", "000_aime2025_shift_test.yaml"),
    ("claim 001 measure", "001_nonstationary_boundaries.yaml"),
    ("claim 002 measure", "002_table1_boundary_1e24.yaml"),
    ("claim 003 measure", "003_sigmoid_vs_baselines.yaml"),
    ("claim 004 measure", "004_hyperparameters.yaml"),
]:
    CASES[_name] = _claim_case(_file)


def study_statistic(claim_file, tables, n_resamples: int = 20) -> tuple[list[dict], Callable]:
    """A claim's coverage-study statistic as the study calls it: its design at the study's parameters
    (:func:`harness.resampling.calibration.design`), rebased on the study's first data set (the fits start from
    that data set's own). ``(values, call)``: the statistic on the full data and on that data set, and
    ``call(i)``, the statistic on resample ``i % n_resamples`` of that data set."""
    from harness.build.runner import measurement_arm
    from harness.core.paths import PROJECT_ROOT
    from harness.core.schema import validate_plain
    from harness.resampling.calibration import design
    from harness.stats.resample import cluster_bootstrap_indices, cluster_ids_from_labels

    spec = load_claim(PROJECT_ROOT / "claims" / claim_file, tables=tables)
    b, c = spec.claim.bootstrap, spec.claim.bootstrap.calibration
    narrowed = {**spec.params.model_dump(mode="json"), **c.params} if c.params else None
    d = design(spec, tables, measurement_arm(spec, tables), narrowed and validate_plain(spec.protocol.Params, narrowed))
    seq = np.random.SeedSequence(b.seed).spawn(c.replicates + 1)[0]
    world_rng, data_rng = (  # the study's streams 0 and 1 of its first data set
        np.random.default_rng(np.random.SeedSequence(seq.entropy, spawn_key=(seq.spawn_key[0], j))) for j in (0, 1)
    )
    world = cluster_bootstrap_indices(cluster_ids_from_labels(d.cluster_labels), 1, world_rng)
    rows = world[0]
    slots = np.repeat(np.arange(world.n_clusters), world.cluster_size[world.cluster_draws[0]])
    full = d.statistic(np.arange(d.n_rows), np.random.default_rng(0))
    values, statistic = d.rebase(rows, data_rng)
    resamples = cluster_bootstrap_indices(slots, n_resamples, np.random.default_rng(2))
    return [full, values], lambda i: statistic(rows[resamples[i % n_resamples]], np.random.default_rng(i))


def _study_statistic_case(claim_file):
    """One call of a claim's coverage-study statistic, on the resamples of the study's first data set in turn."""

    def make(tables):
        _, call = study_statistic(claim_file, tables)
        calls = iter(range(10**9))
        return lambda: call(next(calls))

    return make


for _name, _file in [
    ("claim 001 study statistic", "001_nonstationary_boundaries.yaml"),
    ("claim 002 study statistic", "002_table1_boundary_1e24.yaml"),
    ("claim 003 study statistic", "003_sigmoid_vs_baselines.yaml"),
    ("claim 004 study statistic", "004_hyperparameters.yaml"),
]:
    CASES[_name] = _study_statistic_case(_file)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args(argv)
    tables = Tables(load_lock(), resolve_data_root())
    # the build timings take minutes: only when asked for by name
    chosen = [
        name
        for name in (*CASES, *COMPARISONS)
        if (any(o in name for o in args.only) if args.only else name not in SLOW)
    ]
    if any(name in CASES for name in chosen):
        print("| case | median ms | min–max ms | repeats |\n| --- | --- | --- | --- |")
    with threadpool_limits(limits=1, user_api="blas"):
        for name in chosen:
            if name in COMPARISONS:
                print(("" if name == chosen[0] else "\n") + "\n".join(COMPARISONS[name](tables, args.repeats)))
                continue
            fn = CASES[name](tables)
            inner = 1000 if name.startswith("objective") else 20 if "permutation" in name else 1
            fn()
            times = []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                for _ in range(inner):
                    fn()
                times.append((time.perf_counter() - t0) * 1e3 / inner)
            print(f"| {name} | {statistics.median(times):.3f} | {min(times):.3f}–{max(times):.3f} | {args.repeats} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
